import { describe, expect, test } from 'vitest';
import {
  describeError,
  describeInvalid,
  describeNotification,
  describePending,
  describeRequest,
  describeResult,
  formatMs,
} from '../../src/session/annotate.js';
import type { OpenRequest } from '../../src/session/correlator.js';
import { holdsPrescreenLiteral } from '../../src/log/redact.js';

const open = (over: Partial<OpenRequest>): OpenRequest => ({ dir: 'c2s', id: 1, method: 'tools/call', seq: 0, mono: 0, ...over });

describe('annotate: one plain sentence per record', () => {
  test('formatMs', () => {
    expect(formatMs(0.42)).toBe('0.42 ms');
    expect(formatMs(12.4)).toBe('12 ms');
    expect(formatMs(1340)).toBe('1.3 s');
  });

  test('requests', () => {
    expect(describeRequest('c2s', 'initialize', { protocolVersion: '2025-06-18', capabilities: { roots: { listChanged: true }, sampling: {} }, clientInfo: { name: 'claude-ai', version: '0.1.0' } })).toBe(
      'Handshake: client claude-ai 0.1.0 offers protocol 2025-06-18 with capabilities roots(listChanged), sampling.',
    );
    expect(describeRequest('c2s', 'initialize', undefined)).toBe('Handshake: client an unnamed client offers protocol no version with no capabilities.');
    expect(describeRequest('s2c', 'ping', undefined)).toBe('Server pings the client to check it is alive.');
    expect(describeRequest('c2s', 'tools/list', { cursor: 'abc' })).toBe('Client asks which tools the server offers (next page).');
    expect(describeRequest('c2s', 'tools/call', { name: 'get_forecast' })).toBe('Client calls tool get_forecast with no arguments.');
    expect(describeRequest('c2s', 'resources/read', { uri: 'file:///a' })).toBe('Client reads resource file:///a.');
    expect(describeRequest('c2s', 'prompts/get', { name: 'p', arguments: { city: 'Paris' } })).toBe('Client gets prompt p with {"city":"Paris"}.');
    expect(describeRequest('s2c', 'elicitation/create', { message: 'Your name?' })).toBe('Server asks the user for input: "Your name?".');
    expect(describeRequest('s2c', 'roots/list', {})).toBe('Server asks the client for its roots (the folders it may work in).');
    expect(describeRequest('c2s', 'logging/setLevel', { level: 'debug' })).toBe('Client asks the server to send logs at level debug and above.');
    expect(describeRequest('c2s', 'tasks/get', { taskId: 't1' })).toBe('Client asks for the status of task t1 (tasks/get).');
    expect(describeRequest('c2s', 'x/custom', {})).toBe('Client sends request x/custom (a method this version of mcptap does not know; relayed as is).');
  });

  test('a request from the side that may not send it says who sent it, not what the other side would mean', () => {
    // A server that echoes its input (a `cat`, a debug print of stdin) sends the client's requests back.
    expect(describeRequest('s2c', 'tools/call', { name: 'get_weather', arguments: {} })).toBe(
      'Server sends tools/call get_weather, a request only a client sends (does the server write what it reads back to stdout?).',
    );
    expect(describeRequest('s2c', 'initialize', {})).toBe('Server sends initialize, a request only a client sends (does the server write what it reads back to stdout?).');
    expect(describeRequest('c2s', 'sampling/createMessage', {})).toBe('Client sends sampling/createMessage, a request only a server sends.');
    // Either side may ping, or ask after a task; a method the spec does not name is not judged.
    expect(describeRequest('c2s', 'ping', undefined)).toBe('Client pings the server to check it is alive.');
    expect(describeRequest('s2c', 'tasks/get', { taskId: 't1' })).toBe('Server asks for the status of task t1 (tasks/get).');
    expect(describeRequest('s2c', 'x/custom', {})).toMatch(/^Server sends request x\/custom/);
  });

  test('a long tool argument is previewed, not dumped', () => {
    const msg = describeRequest('c2s', 'tools/call', { name: 'echo', arguments: { message: 'y'.repeat(1_000_000) } });
    expect(msg.length).toBeLessThan(200);
    expect(msg).toMatch(/^Client calls tool echo with \{"message":"yyyy.*…\.$/);
  });

  test('results', () => {
    const hs = {};
    expect(describeResult(open({ method: 'tools/list' }), { tools: Array.from({ length: 10 }, (_, i) => ({ name: `t${i}` })), nextCursor: 'n' }, 3, hs)).toBe(
      'Server offers 10 tools: t0, t1, t2, t3, t4, t5, t6, t7 and 2 more (more pages follow) (3 ms).',
    );
    expect(describeResult(open({ tool: 'img' }), { content: [{ type: 'text' }, { type: 'image' }, { type: 'image' }] }, 2, hs)).toBe('Tool img returned 1 text, 2 image (2 ms).');
    expect(describeResult(open({ tool: 'x' }), { content: [] }, 1, hs)).toBe('Tool x returned no content (1 ms).');
    expect(describeResult(open({ tool: 'x' }), { task: { taskId: 'a' } }, 1, hs)).toBe('Tool x was accepted as a task; its result comes later via tasks/result (1 ms).');
    expect(describeResult(open({ method: 'ping', dir: 's2c' }), {}, 0.5, hs)).toBe('Client answers the ping (0.50 ms).');
    expect(describeResult(open({ method: 'elicitation/create', dir: 's2c' }), { action: 'decline' }, 900, hs)).toBe(
      'The user answered the elicitation with action decline (900 ms).',
    );
    expect(describeResult(open({ method: 'roots/list', dir: 's2c' }), { roots: [{}, {}] }, 1, hs)).toBe('Client returns 2 roots (1 ms).');
    expect(describeResult(open({ method: 'completion/complete' }), {}, 1, hs)).toBe('Server answers completion/complete (1 ms).');
    expect(describeResult(undefined, {}, undefined, hs)).toBe('Response to a request mcptap did not see.');
  });

  test('errors', () => {
    expect(describeError(open({ tool: 'w' }), { code: -32602, message: 'bad' }, 4)).toBe(
      'Error -32602 (invalid params: the arguments do not match what the method expects) to tools/call w: "bad" (4 ms).',
    );
    expect(describeError(undefined, { code: -32050, message: 'x' }, undefined)).toBe('Error -32050 (a server-defined error): "x".');
    expect(describeError(undefined, { code: 17, message: 'x' }, undefined)).toBe('Error 17 (an application-defined error): "x".');
  });

  test('notifications', () => {
    expect(describeNotification('s2c', 'notifications/progress', { progressToken: 't', progress: 3 }, undefined)).toBe('Progress for token t: 3.');
    expect(describeNotification('c2s', 'notifications/cancelled', { requestId: 4 }, undefined)).toBe('Client cancels request #4.');
    expect(describeNotification('s2c', 'notifications/message', { level: 'warning', logger: 'db', data: { slow: true } }, undefined)).toBe(
      'Server log (warning, db): {"slow":true}',
    );
    expect(describeNotification('s2c', 'notifications/resources/updated', { uri: 'a://b' }, undefined)).toBe('Server says resource a://b changed.');
    expect(describeNotification('s2c', 'vendor/thing', {}, undefined)).toBe('Server notifies vendor/thing (a method this version of mcptap does not know; relayed as is).');
  });

  test('invalid frames', () => {
    expect(describeInvalid('s2c', 'plain text, not JSON', 'hello', false, false)).toBe('The server sent something that is not JSON-RPC (plain text, not JSON): "hello".');
    expect(describeInvalid('s2c', 'an empty line', '', false, true)).toBe(
      'The server wrote a line that is not JSON-RPC to stdout (an empty line); MCP clients will fail on it. Send logs to stderr instead.',
    );
  });

  test('stdout pollution comes with the fix that fits its cause', () => {
    expect(describeInvalid('s2c', 'a piece of a JSON message spread over several lines (stdio needs one message per line)', '  "id": 1,', false, true)).toBe(
      'The server wrote a line that is not JSON-RPC to stdout (a piece of a JSON message spread over several lines (stdio needs one message per line)); MCP clients will fail on it. Write each message on one line (no indentation): "\"id\": 1,".',
    );
    expect(describeInvalid('s2c', 'a line that starts with a UTF-8 byte-order mark (BOM), which JSON parsers reject', '\ufeff{}', false, true)).toMatch(/Write UTF-8 without a BOM/);
  });

  test("mcptap's own words in a frame's summary give redaction no reason to read the frame closely", () => {
    // Redaction reads a whole record slowly only when its line holds a word a secret could follow (`pass`,
    // `token`, `key`…). A 64 KiB frame of an unknown method was summarized as "passed through as is": each of
    // its records then went through the full screen: 2.5–2.9 ms of inspection an echo, 1.2–1.5 ms once reworded.
    // A frame's own words are another matter.
    for (const summary of [
      describeRequest('c2s', 'x/custom', {}),
      describeNotification('s2c', 'vendor/thing', {}, undefined),
      describeInvalid('s2c', 'a partial line at the end of the stream', '', true, true),
      describeInvalid('s2c', 'plain text, not JSON', '', false, true),
    ]) {
      expect(holdsPrescreenLiteral(summary), summary).toBe(false);
    }
  });

  test('pending', () => {
    expect(describePending(open({ dir: 's2c', method: 'sampling/createMessage', id: 0 }), 61000, 'session-ended')).toBe(
      "The server's request sampling/createMessage #0 was never answered (waited 61.0 s before the session ended).",
    );
  });
});
