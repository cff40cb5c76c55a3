'use strict';
// The runtime import graph of a TypeScript project, built once per tsconfig.json: which source
// file imports which, resolved as the compiler resolves them (relative paths, `paths` aliases,
// directory indexes). Type-only imports and re-exports are left out: they are erased at run time.
const path = require('node:path');
const ts = require('typescript');

/** tsconfig.json path → graph. */
const graphs = new Map();

/** The graph of the project whose tsconfig.json is nearest above `file` (undefined: none). */
function graphFor(file) {
  const config = ts.findConfigFile(path.dirname(file), ts.sys.fileExists, 'tsconfig.json');
  if (!config) return undefined;
  let graph = graphs.get(config);
  if (!graph) {
    graph = buildGraph(config);
    graphs.set(config, graph);
  }
  return graph;
}

function buildGraph(configFile) {
  const read = ts.readConfigFile(configFile, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, path.dirname(configFile));
  const files = new Set(parsed.fileNames.map((file) => path.resolve(file)));
  const cache = ts.createModuleResolutionCache(path.dirname(configFile), (name) => name, parsed.options);
  const resolve = (specifier, from) => {
    const resolved = ts.resolveModuleName(specifier, from, parsed.options, ts.sys, cache).resolvedModule;
    const target = resolved && path.resolve(resolved.resolvedFileName);
    return target && files.has(target) ? target : undefined;
  };
  const edges = new Map();
  for (const file of files) {
    const source = ts.createSourceFile(file, ts.sys.readFile(file) ?? '', ts.ScriptTarget.Latest, false);
    const targets = runtimeSpecifiers(source)
      .map((specifier) => resolve(specifier, file))
      .filter((target) => target !== undefined);
    edges.set(file, [...new Set(targets)]);
  }
  return { root: path.dirname(configFile), resolve, edges, components: stronglyConnected(edges) };
}

/** The module specifiers of a file's imports and re-exports that remain at run time. */
function runtimeSpecifiers(source) {
  const specifiers = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && !typeOnlyImport(statement.importClause)) {
      specifiers.push(statement.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && !typeOnlyExport(statement)) {
      specifiers.push(statement.moduleSpecifier.text);
    }
  }
  return specifiers;
}

function typeOnlyImport(clause) {
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return (
    !clause.name &&
    named !== undefined &&
    ts.isNamedImports(named) &&
    named.elements.length > 0 &&
    named.elements.every((e) => e.isTypeOnly)
  );
}

function typeOnlyExport(statement) {
  if (statement.isTypeOnly) return true;
  const clause = statement.exportClause;
  return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
}

/** Tarjan's algorithm: file → the id of its strongly connected component. */
function stronglyConnected(edges) {
  const index = new Map();
  const low = new Map();
  const component = new Map();
  const stack = [];
  const onStack = new Set();
  let counter = 0;
  const visit = (start) => {
    // Iterative, so a deep import chain cannot overflow the stack.
    const work = [[start, 0]];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node, at] = frame;
      const next = (edges.get(node) ?? [])[at];
      if (next !== undefined) {
        frame[1] += 1;
        if (!index.has(next)) {
          index.set(next, counter);
          low.set(next, counter++);
          stack.push(next);
          onStack.add(next);
          work.push([next, 0]);
        } else if (onStack.has(next)) {
          low.set(node, Math.min(low.get(node), index.get(next)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === index.get(node)) {
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.set(member, node);
        } while (member !== node);
      }
    }
  };
  for (const file of edges.keys()) if (!index.has(file)) visit(file);
  return component;
}

/** The shortest import chain from `from` to `to` (both included), or undefined. */
function chain(graph, from, to) {
  const previous = new Map([[from, undefined]]);
  const queue = [from];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const next of graph.edges.get(node) ?? []) {
      if (next === to) {
        const path = [to, node];
        for (let at = previous.get(node); at !== undefined; at = previous.get(at)) path.push(at);
        return path.reverse();
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return undefined;
}

module.exports = { graphFor, chain };
