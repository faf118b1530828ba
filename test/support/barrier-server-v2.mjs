#!/usr/bin/env node
/**
 * barrier-server.mjs built with the official SDK v2 (`@modelcontextprotocol/server`, MCP 2026-07-28): its one
 * tool, `wait`, answers no call until `BARRIER` calls are waiting, then all of them.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

const barrier = Number(process.env.BARRIER ?? 12_000);
const waiting = [];

function makeServer() {
  const server = new McpServer({ name: 'barrier', version: '2.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('wait', { description: 'Answers once enough calls wait.', inputSchema: z.object({ n: z.number() }) }, ({ n }) =>
    new Promise((resolve) => {
      waiting.push(() => resolve({ content: [{ type: 'text', text: `call ${n}` }] }));
      if (waiting.length >= barrier) for (const answer of waiting.splice(0)) answer();
    }),
  );
  return server;
}

serveStdio(() => makeServer());
