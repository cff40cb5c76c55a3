import { ListPageQuerySchema, type ListPageQuery } from '@codemode/contracts';
import { InvalidInputException } from '../http/api-errors';

/** `?limit=&cursor=` of a listing, or a 400 naming the field. */
export function parseListPageQuery(query: Record<string, unknown>): ListPageQuery {
  const parsed = ListPageQuerySchema.safeParse({ limit: query.limit, cursor: query.cursor });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue.path.join('.') || 'query';
  throw new InvalidInputException(`${field}: ${issue.message}`, { field });
}
