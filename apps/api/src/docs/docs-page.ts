import type { MediaType, Operation, ResponseObject } from './openapi-builders';
import type { OpenApiDocument } from './openapi-document';

const METHODS = ['get', 'put', 'post', 'delete'] as const;

/**
 * `/docs`: the document rendered as one static HTML page, once, on the server. No scripts, fonts
 * or stylesheets from elsewhere: the service must be browsable offline and behind strict proxies.
 */
export function renderDocsPage(doc: OpenApiDocument): string {
  const operations: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op) operations.push(renderOperation(doc, method, path, op));
    }
  }
  const schemas = Object.entries(doc.components.schemas).map(
    ([name, schema]) => `<details id="schema-${esc(name)}"><summary>${esc(name)}</summary>${pre(schema)}</details>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)} ${esc(doc.info.version)} — API</title>
<style>${STYLE}</style></head><body>
<h1>${esc(doc.info.title)} <small>${esc(doc.info.version)}</small></h1>
<p>${esc(doc.info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${esc(doc.openapi)}).</p>
<h2>Operations</h2>
${operations.join('\n')}
<h2>Schemas</h2>
${schemas.join('\n')}
</body></html>
`;
}

function renderOperation(doc: OpenApiDocument, method: string, path: string, op: Operation): string {
  const open = op.security !== undefined && op.security.length === 0;
  const parts = [
    `<section class="op"><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${esc(path)}</code> ${esc(op.summary)}</h3>`,
    `<p class="auth">${open ? 'No authentication.' : 'Bearer key (when API keys are configured).'}</p>`,
  ];
  if (op.description) parts.push(`<p>${esc(op.description)}</p>`);
  const params = (op.parameters ?? [])
    .map((p) => resolve<Record<string, unknown>>(doc, p))
    .map((p) => `<code>${esc(String(p.name))}</code> (${esc(String(p.in))})`);
  if (params.length > 0) parts.push(`<p>Parameters: ${params.join(', ')}</p>`);
  if (op.requestBody) parts.push(`<h4>Body</h4>${renderContent(op.requestBody.content)}`);
  for (const [status, ref] of Object.entries(op.responses)) {
    const response = resolve<ResponseObject>(doc, ref);
    parts.push(`<h4>${esc(status)} — ${esc(response.description)}</h4>${renderContent(response.content ?? {})}`);
  }
  parts.push('</section>');
  return parts.join('\n');
}

function renderContent(content: Record<string, MediaType>): string {
  return Object.entries(content)
    .map(([type, media]) => {
      const ref = typeof media.schema.$ref === 'string' ? (media.schema.$ref.split('/').pop() ?? '') : '';
      const shape = ref
        ? `<a href="#schema-${esc(ref)}">${esc(ref)}</a>`
        : esc(typeof media.schema.type === 'string' ? media.schema.type : 'any');
      const examples = Object.values(media.examples ?? {}).map((e) => `<p class="ex">${esc(e.summary)}</p>${pre(e.value)}`);
      if (media.example !== undefined) examples.push(pre(media.example));
      return `<p><code>${esc(type)}</code>: ${shape}</p>${examples.join('')}`;
    })
    .join('');
}

/** Follows one local `$ref` (`#/components/<kind>/<name>`); other objects pass through. */
function resolve<T extends object>(doc: OpenApiDocument, value: T | { $ref: string }): T {
  if (!('$ref' in value) || typeof value.$ref !== 'string') return value as T;
  const [, , kind, name] = value.$ref.split('/');
  const table = (doc.components as Record<string, Record<string, unknown>>)[kind] ?? {};
  return (table[name] ?? {}) as T;
}

function pre(value: unknown): string {
  return `<pre>${esc(typeof value === 'string' ? value : JSON.stringify(value, null, 2))}</pre>`;
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
code,pre{font-family:ui-monospace,monospace;font-size:13px}pre{background:#f5f5f5;padding:.5rem;overflow:auto;max-height:24rem}
.op{border-top:1px solid #ddd;padding-top:.5rem}.m{display:inline-block;min-width:4rem;text-align:center;color:#fff;border-radius:3px;padding:0 .3rem}
.get{background:#2b7bb9}.put{background:#a36a00}.post{background:#2e8540}.delete{background:#b92b2b}.auth,.ex{color:#666;margin:.2rem 0}
h4{margin:.6rem 0 .2rem}summary{cursor:pointer}`;
