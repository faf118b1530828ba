#!/usr/bin/env node
/**
 * A real MCP server (the official SDK's McpServer over stdio) whose one tool, `wait`, answers no call until
 * `BARRIER` calls are waiting, then all of them: a load test's burst, more requests in flight at once than mcptap
 * tracks (its table holds 10,000), every one of them answered.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const barrier = Number(process.env.BARRIER ?? 12_000);
const waiting = [];
const server = new McpServer({ name: 'barrier', version: '1.0.0' });
server.registerTool('wait', { description: 'Answers once enough calls wait.', inputSchema: { n: z.number() } }, ({ n }) =>
  new Promise((resolve) => {
    waiting.push(() => resolve({ content: [{ type: 'text', text: `call ${n}` }] }));
    if (waiting.length >= barrier) for (const answer of waiting.splice(0)) answer();
  }),
);
await server.connect(new StdioServerTransport());
