import type { RedisClient } from '../platform/redis';
import { InvalidArgumentError } from '../platform/errors';
import { guard } from '../platform/redis';

/** One page of a sorted set read newest (highest score) first; `next` continues after its last member. */
export interface NewestFirstPage {
  entries: Array<{ member: string; score: number }>;
  next: string | null;
}

/** Members sharing the cursor's score that one read may have to skip before the page starts. */
const TIE_SLACK = 64;

/**
 * Reads a page of `key` from the highest score down. The cursor is opaque to callers: the score
 * and member of the last entry served (base64url JSON), so members added meanwhile never shift
 * a page the way an offset would; members with the cursor's score sort by member, as Redis does.
 */
export async function readNewestFirst(redis: RedisClient, key: string, limit: number, cursor?: string): Promise<NewestFirstPage> {
  const from = cursor === undefined ? null : decodeCursor(cursor);
  const max = from === null ? '+inf' : String(from.score);
  const raw = await guard(() => redis.zrevrangebyscore(key, max, '-inf', 'WITHSCORES', 'LIMIT', 0, limit + 1 + (from ? TIE_SLACK : 0)));
  const entries: Array<{ member: string; score: number }> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const entry = { member: raw[i], score: Number(raw[i + 1]) };
    // ZREVRANGEBYSCORE lists equal scores in reverse member order: the ones at or before the cursor were served.
    if (from !== null && entry.score === from.score && entry.member >= from.member) continue;
    entries.push(entry);
  }
  const page = entries.slice(0, limit);
  const last = page[page.length - 1];
  return { entries: page, next: entries.length > limit && last ? encodeCursor(last) : null };
}

function encodeCursor(entry: { member: string; score: number }): string {
  return Buffer.from(JSON.stringify([entry.score, entry.member])).toString('base64url');
}

function decodeCursor(cursor: string): { score: number; member: string } {
  try {
    const [score, member] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof score === 'number' && Number.isFinite(score) && typeof member === 'string') return { score, member };
  } catch {
    // Falls through to the error below: not our cursor.
  }
  throw new InvalidArgumentError('cursor', 'must be the `next` of a previous page');
}
