#!/usr/bin/env node
'use strict';
/* eslint-disable -- plain CommonJS test fixture: runs under node without a build, outside the typed TypeScript sources. */
/**
 * A small stdio MCP server for the tools library's tests (plain CommonJS so it runs without a
 * build: `node fixture-mcp-server.js`). Tools:
 * - create_issue {title, priority = "normal"} → structuredContent {id, title, priority} + text
 * - delete {id}     (a reserved word as a tool name) → text
 * - fail {reason?}  → an isError result with text content
 * - slow {ms}       → answers after `ms` milliseconds (timeouts and aborts)
 * - echo_env {name} → the value of an environment variable (config env passing)
 * - echo_meta {}    → the request's `_meta.idempotencyKey` (SPEC §16 callKey); annotated idempotent
 */
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

function createFixtureServer() {
  const server = new McpServer({ name: 'fixture', version: '1.0.0' });
  let nextIssue = 1;

  server.registerTool(
    'create_issue',
    {
      description: 'Create an issue in the fixture tracker.',
      inputSchema: {
        title: z.string().describe('Issue title'),
        priority: z.enum(['low', 'normal', 'high']).default('normal'),
      },
      outputSchema: { id: z.number(), title: z.string(), priority: z.string() },
    },
    async ({ title, priority }) => {
      const issue = { id: nextIssue++, title, priority };
      return { content: [{ type: 'text', text: `Created issue #${issue.id}: ${title}` }], structuredContent: issue };
    },
  );

  server.registerTool('delete', { description: 'Delete an issue.', inputSchema: { id: z.number() } }, async ({ id }) => ({
    content: [{ type: 'text', text: `Deleted issue #${id}` }],
  }));

  server.registerTool('fail', { description: 'Always fails.', inputSchema: { reason: z.string().optional() } }, async ({ reason }) => ({
    isError: true,
    content: [
      { type: 'text', text: 'fixture failure' },
      { type: 'text', text: reason || 'no reason given' },
    ],
  }));

  server.registerTool('slow', { description: 'Answers after a delay.', inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: [{ type: 'text', text: `waited ${ms} ms` }] };
  });

  server.registerTool(
    'echo_env',
    { description: 'Reads an environment variable.', inputSchema: { name: z.string() } },
    async ({ name }) => ({ content: [{ type: 'text', text: process.env[name] || '' }] }),
  );

  const echoMeta = { description: 'Reads the idempotency key of the request.', inputSchema: {}, annotations: { idempotentHint: true } };
  server.registerTool('echo_meta', echoMeta, async (_args, extra) => ({
    content: [{ type: 'text', text: String((extra._meta && extra._meta.idempotencyKey) || '') }],
  }));

  return server;
}

module.exports = { createFixtureServer };

if (require.main === module) {
  createFixtureServer()
    .connect(new StdioServerTransport())
    .catch((error) => {
      process.stderr.write(`fixture MCP server failed: ${error && error.stack}\n`);
      process.exit(1);
    });
}
