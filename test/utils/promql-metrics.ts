/** Words of PromQL that look like metric names but are operators or modifiers. */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects. Small on purpose: strips strings, label matchers,
 * range selectors, grouping clauses and Grafana variables, then keeps identifiers that are not
 * called as functions or aggregations. Enough for the expressions in deploy/, not a parser.
 */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/(?<![\w.:])([A-Za-z_:][A-Za-z0-9_:]*)(?![\w:])(?!\s*\()/g)) {
    if (!KEYWORDS.has(match[1].toLowerCase())) names.add(match[1]);
  }
  return [...names];
}

/** The metric a series belongs to: histogram and summary series map to their base name. */
export function baseMetricName(series: string, known: ReadonlySet<string>): string {
  if (known.has(series)) return series;
  const base = series.replace(/_(?:bucket|sum|count)$/, '');
  return known.has(base) ? base : series;
}
