/**
 * The seccomp program every sandbox runs under (bubblewrap `--seccomp`), as classic BPF.
 *
 * It refuses the calls that take disk faster than the workspace watchdog can see it: `fallocate`
 * reserves gigabytes in a millisecond without writing (answered EOPNOTSUPP, so glibc's
 * `posix_fallocate` falls back to writing, at disk speed, where the watchdog's one-second bound
 * holds), and `io_uring_setup` (ENOSYS), since io_uring would submit the same fallocate past any
 * syscall filter. Calls of another ABI (32-bit, x32) are refused (EPERM): their numbers differ and
 * would slip past the checks.
 */

/** `struct sock_filter` opcodes and seccomp return values (linux/filter.h, linux/seccomp.h). */
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
const EOPNOTSUPP = 95;
/** Offsets in `struct seccomp_data`. */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
/** x32 system calls carry this bit on x86_64. */
const X32_SYSCALL_BIT = 0x40000000;
/** `io_uring_setup` has the same number on every architecture. */
const IO_URING_SETUP = 425;

/** Audit architecture and `fallocate`'s number, per Node architecture this filter knows. */
const ARCHES: Partial<Record<NodeJS.Architecture, { audit: number; fallocate: number }>> = {
  x64: { audit: 0xc000003e, fallocate: 285 },
  arm64: { audit: 0xc00000b7, fallocate: 47 },
};

/** The compiled program for `arch`, or null on an architecture it does not know (no filter then). */
export function sandboxSeccompProgram(arch: NodeJS.Architecture = process.arch): Buffer | null {
  const known = ARCHES[arch];
  if (!known) return null;
  // [code, jt, jf, k]; jumps count instructions forward from the next one.
  const program: [number, number, number, number][] = [
    [LD_W_ABS, 0, 0, ARCH_OFFSET],
    [JEQ_K, 0, 7, known.audit], // another ABI → 9
    [LD_W_ABS, 0, 0, NR_OFFSET],
    [JGE_K, 5, 0, X32_SYSCALL_BIT], // x32 → 9
    [JEQ_K, 2, 0, known.fallocate], // → 7
    [JEQ_K, 2, 0, IO_URING_SETUP], // → 8
    [RET_K, 0, 0, RET_ALLOW],
    [RET_K, 0, 0, RET_ERRNO | EOPNOTSUPP],
    [RET_K, 0, 0, RET_ERRNO | ENOSYS],
    [RET_K, 0, 0, RET_ERRNO | EPERM],
  ];
  const out = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], i) => {
    out.writeUInt16LE(code, i * 8);
    out.writeUInt8(jt, i * 8 + 2);
    out.writeUInt8(jf, i * 8 + 3);
    out.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return out;
}
