import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sandboxSeccompProgram } from './seccomp-filter';

/** Name of the compiled seccomp program in the folder, when this architecture has one. */
export const SECCOMP_FILE = 'seccomp.bpf';

/**
 * Writes the `/etc/passwd`, `/etc/group` and `/etc/hosts` every sandbox sees, into a fresh folder
 * readable by the per-tenant uids. The host's own files would show the host's accounts; tools
 * such as `id`, `whoami` and `ssh` want the sandbox user (1000, home `/workspace`) to exist.
 * The folder also holds the sandbox's seccomp program (`SECCOMP_FILE`, see `sandboxSeccompProgram`).
 */
export function writeSandboxEtc(parent: string = tmpdir()): string {
  const dir = mkdtempSync(path.join(parent, 'codemode-sandbox-etc-'));
  chmodSync(dir, 0o755);
  const files: Record<string, string> = {
    passwd:
      'root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:1000:1000:sandbox:/workspace:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
    group: 'root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n',
    hosts: '127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n',
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text, { mode: 0o644 });
  const seccomp = sandboxSeccompProgram();
  if (seccomp) writeFileSync(path.join(dir, SECCOMP_FILE), seccomp, { mode: 0o644 });
  return dir;
}
