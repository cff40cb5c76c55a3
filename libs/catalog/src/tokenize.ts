/**
 * Search terms (SPEC §4): lowercase words split at non-alphanumerics and at camelCase
 * boundaries, two characters or more. `fake_create_ticket` → fake, create, ticket;
 * `listURL` → list, url; `URLParser` → url, parser. Digits stay with their word (`3d`, `v2`).
 */
export function tokenize(text: string): string[] {
  const spaced = text
    // lower or digit followed by upper: `listUrl`, `v2Api`
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    // an acronym followed by a capitalized word: `URLParser` → `URL Parser`
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2');
  const terms: string[] = [];
  for (const word of spaced.split(/[^\p{L}\p{N}]+/u)) {
    const term = word.toLowerCase();
    if ([...term].length >= 2) {
      terms.push(term);
    }
  }
  return terms;
}
