'use strict';
// ESLint rule: an import (or re-export) that closes an import cycle between the project's
// TypeScript files. A cycle makes module load order matter: one side sees the other half-initialised.
const path = require('node:path');
const { chain, graphFor } = require('./import-graph');

/** @type {import('eslint').Rule.RuleModule} */
module.exports = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid imports that close an import cycle (type-only imports are ignored).' },
    schema: [],
    messages: { cycle: 'This import closes an import cycle: {{cycle}}.' },
  },
  create(context) {
    const file = path.resolve(context.filename);
    const graph = graphFor(file);
    if (!graph || !graph.edges.has(file)) return {};
    const check = (node) => {
      if (!node.source || typeof node.source.value !== 'string' || typeOnly(node)) return;
      const target = graph.resolve(node.source.value, file);
      if (target === undefined || graph.components.get(target) !== graph.components.get(file)) return;
      const back = target === file ? [file] : chain(graph, target, file);
      if (!back) return;
      const cycle = [file, ...back].map((member) => path.relative(graph.root, member)).join(' → ');
      context.report({ node: node.source, messageId: 'cycle', data: { cycle } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};

/** `import type …`, `export type … from`, or only `type` specifiers: erased at run time. */
function typeOnly(node) {
  if (node.importKind === 'type' || node.exportKind === 'type') return true;
  const specifiers = node.specifiers ?? [];
  if (specifiers.length === 0) return false;
  if (node.type === 'ImportDeclaration') return specifiers.every((s) => s.type === 'ImportSpecifier' && s.importKind === 'type');
  return specifiers.every((s) => s.exportKind === 'type');
}
