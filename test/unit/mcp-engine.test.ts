import { describe, expect, test } from 'vitest';
import { buildScript, McpReplayEngine, REPLAY_ERROR, type EngineOutput } from '../../src/replay/mcp-engine.js';
import type { LogRecord } from '../../src/log/schema.js';

let seq = 0;
/** A frame record as the stdio tap writes it (only the fields the replay reads matter). */
function frame(dir: 'c2s' | 's2c', json: Record<string, unknown> | string, extra: Record<string, unknown> = {}, time = 1000 + seq * 10): LogRecord {
  const raw = typeof json === 'string' ? json : JSON.stringify(json);
  let kind: string = 'invalid';
  const fields: Record<string, unknown> = {};
  if (typeof json !== 'string') {
    if ('method' in json && 'id' in json) {
      kind = 'request';
      fields.id = json.id;
      fields.method = json.method;
    } else if ('method' in json) {
      kind = 'notification';
      fields.method = json.method;
    } else {
      kind = 'response';
      fields.id = json.id;
    }
  }
  return { v: 1, time, seq: seq++, session: 's1', channel: 'stdio', label: 't', msg: '', dir, kind, bytes: raw.length, raw, ...fields, ...extra } as LogRecord;
}

const lines = (out: EngineOutput): unknown[] => out.frames.map((f) => JSON.parse(f.bytes.toString('utf8')) as unknown);

/** initialize, initialized → roots/list asked by the server; tools/call with progress; a sampling round trip. */
function session(): LogRecord[] {
  seq = 0;
  const r: LogRecord[] = [];
  r.push(frame('c2s', { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', clientInfo: { name: 'c', version: '1' } } }));
  r.push(frame('s2c', { jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-11-25', serverInfo: { name: 's' } } }, { requestSeq: 0 }));
  r.push(frame('c2s', { jsonrpc: '2.0', method: 'notifications/initialized' }));
  r.push(frame('s2c', { jsonrpc: '2.0', id: 0, method: 'roots/list' }));
  r.push(frame('c2s', { jsonrpc: '2.0', id: 0, result: { roots: [] } }, { requestSeq: 3 }));
  r.push(frame('c2s', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { n: 1 }, _meta: { progressToken: 1 } } }, { tool: 'slow', progressToken: 1 }));
  r.push(frame('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1, total: 2 } }, { requestSeq: 5 }));
  r.push(frame('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 2, total: 2 } }, { requestSeq: 5 }));
  r.push(frame('s2c', { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'slow done' }] } }, { requestSeq: 5 }));
  r.push(frame('c2s', { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ask', arguments: {} } }, { tool: 'ask' }));
  r.push(frame('s2c', { jsonrpc: '2.0', id: 1, method: 'sampling/createMessage', params: { messages: [] } }));
  r.push(frame('c2s', { jsonrpc: '2.0', id: 1, result: { role: 'assistant', content: { type: 'text', text: 'blue' } } }, { requestSeq: 10 }));
  r.push(frame('s2c', { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'the model said blue' }] } }, { requestSeq: 9 }));
  return r;
}

describe('McpReplayEngine', () => {
  test('answers with recorded responses under the live ids, and sends server requests at their recorded points', () => {
    const engine = new McpReplayEngine(buildScript(session()));
    expect(engine.start().frames).toEqual([]);
    expect(lines(engine.receive(JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'initialize', params: { protocolVersion: '2025-11-25', clientInfo: { name: 'c', version: '2' } } })))).toEqual([
      { jsonrpc: '2.0', id: 'a', result: { protocolVersion: '2025-11-25', serverInfo: { name: 's' } } },
    ]);
    // The server asked for roots only after the client confirmed the handshake.
    expect(lines(engine.receive('{"jsonrpc":"2.0","method":"notifications/initialized"}'))).toEqual([{ jsonrpc: '2.0', id: 0, method: 'roots/list' }]);
    expect(engine.receive('{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}').frames).toEqual([]);
    // Progress follows the live token, the response the live id.
    const call = engine.receive(JSON.stringify({ jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'slow', arguments: { n: 1 }, _meta: { progressToken: 'tok' } } }));
    expect(lines(call)).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 1, total: 2 } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 2, total: 2 } },
      { jsonrpc: '2.0', id: 'b', result: { content: [{ type: 'text', text: 'slow done' }] } },
    ]);
    // Recorded spacing: 10 ms between recorded frames in this fixture.
    expect(call.frames.map((f) => f.delayMs)).toEqual([10, 10, 10]);
    // The sampling request goes out, and the tool's answer waits for the client's answer to it.
    expect(lines(engine.receive(JSON.stringify({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'ask', arguments: {} } })))).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'sampling/createMessage', params: { messages: [] } },
    ]);
    const answer = engine.receive(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { role: 'assistant', content: { type: 'text', text: 'blue' } } }));
    expect(answer.notes).toEqual([]);
    expect(lines(answer)).toEqual([{ jsonrpc: '2.0', id: 'c', result: { content: [{ type: 'text', text: 'the model said blue' }] } }]);
    expect(engine.stats).toMatchObject({ recordedRequests: 3, answered: 3, misses: 0, sentServerFrames: 7, recordedServerFrames: 7 });
  });

  test('unchanged frames go out byte for byte as recorded', () => {
    seq = 0;
    const raw = '{"jsonrpc": "2.0", "id": 5, "result": {"b": 1, "a": 2}}';
    const records = [frame('c2s', { jsonrpc: '2.0', id: 5, method: 'ping' }), { ...frame('s2c', { jsonrpc: '2.0', id: 5, result: {} }, { requestSeq: 0 }), raw } as LogRecord];
    const out = new McpReplayEngine(buildScript(records)).receive('{"jsonrpc":"2.0","id":5,"method":"ping"}');
    expect(out.frames[0]!.bytes.toString()).toBe(raw);
  });

  test('a request not in the capture gets a JSON-RPC error naming it, and a note', () => {
    const engine = new McpReplayEngine(buildScript(session()), { source: 'weather.ndjson' });
    const out = engine.receive('{"jsonrpc":"2.0","id":9,"method":"prompts/list"}');
    expect(lines(out)).toEqual([
      {
        jsonrpc: '2.0',
        id: 9,
        error: { code: REPLAY_ERROR.unknownMethod, message: 'mcptap replay: prompts/list is not in the capture weather.ndjson: the recorded server never received prompts/list.' },
      },
    ]);
    expect(out.notes).toEqual(['replay miss: prompts/list is not in the capture weather.ndjson: the recorded server never received prompts/list.']);
  });

  test('strict mode refuses other arguments; params mode falls back to recorded order', () => {
    const other = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: { n: 2 } } });
    const strict = new McpReplayEngine(buildScript(session()), { match: 'strict', source: 'x' }).receive(other);
    const error = (lines(strict)[0] as { error: { code: number; message: string } }).error;
    expect(error.code).toBe(REPLAY_ERROR.noMatch);
    expect(error.message).toContain('tools/call slow {"n":2} is not in the capture x');
    // In params mode the first unanswered tools/call (slow, n: 1) answers; its response waits for the
    // recorded causes before it, so nothing is due until initialize has been replayed.
    const params = new McpReplayEngine(buildScript(session()));
    expect(params.receive(other).notes).toEqual([]);
  });

  test('the client answering a server request differently is noted, and the replay goes on', () => {
    const engine = new McpReplayEngine(buildScript(session()));
    engine.receive('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}');
    engine.receive('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    const out = engine.receive('{"jsonrpc":"2.0","id":0,"result":{"roots":[{"uri":"file:///x"}]}}');
    expect(out.notes).toEqual(['replay: the client answered roots/list (id 0) differently than in the capture; the replay goes on with what was recorded next.']);
  });

  test('stdout pollution recorded before the first request is replayed at start, as bytes', () => {
    seq = 0;
    const records = [frame('s2c', 'Server booting...'), frame('c2s', { jsonrpc: '2.0', id: 0, method: 'ping' }), frame('s2c', { jsonrpc: '2.0', id: 0, result: {} }, { requestSeq: 1 })];
    const engine = new McpReplayEngine(buildScript(records));
    expect(engine.start().frames.map((f) => f.bytes.toString())).toEqual(['Server booting...']);
  });

  test('a partial last line is replayed without a line ending, as recorded', () => {
    seq = 0;
    const records = [frame('c2s', { jsonrpc: '2.0', id: 0, method: 'ping' }), frame('s2c', '{"jsonrpc":"2.0","id":0,"res', { partial: true, reason: 'partial' })];
    const out = new McpReplayEngine(buildScript(records)).receive('{"jsonrpc":"2.0","id":0,"method":"ping"}');
    expect(out.frames).toEqual([{ bytes: Buffer.from('{"jsonrpc":"2.0","id":0,"res'), crlf: false, partial: true, delayMs: 10 }]);
  });

  test('a log with several MCP sessions needs a choice; one with none says so', () => {
    seq = 0;
    const a = frame('c2s', { jsonrpc: '2.0', id: 0, method: 'ping' });
    const b = { ...frame('c2s', { jsonrpc: '2.0', id: 0, method: 'ping' }), session: 's2' } as LogRecord;
    expect(() => buildScript([a, b])).toThrow(/2 MCP sessions.*--session: s1 .*s2/);
    expect(buildScript([a, b], 's2').session).toBe('s2');
    expect(() => buildScript([])).toThrow(/no MCP frames/);
  });

  test('a truncated recorded response becomes an error that says to record with a larger --max-body', () => {
    seq = 0;
    const records = [
      frame('c2s', { jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'big' } }),
      { ...frame('s2c', { jsonrpc: '2.0', id: 0, result: {} }, { requestSeq: 0 }), raw: '{"jsonrpc":"2.0","id":0,"result":{"content":[{"text":"xxxx', truncated: true } as LogRecord,
    ];
    const out = new McpReplayEngine(buildScript(records)).receive('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"big"}}');
    expect((lines(out)[0] as { id: number; error: { message: string } }).id).toBe(3);
    expect((lines(out)[0] as { error: { message: string } }).error.message).toMatch(/larger --max-body/);
  });
});
