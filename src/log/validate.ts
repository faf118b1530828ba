/**
 * Is a parsed line a record every reader can trust? The shape of each kind (schema.ts) as a table: the fields
 * its readers use, required or optional, and their types. The reader checks every record against it as it
 * reads, so that view, check, trace, export and replay never meet a record without its `label` or with
 * `toolCalls` that are not a list (a hand-edited log, another program's NDJSON, a log cut mid-record): such a
 * record is skipped with a note naming the field. Fields the table does not name pass as they are (new
 * optional fields need no change here). Pure.
 */
import { LOG_FORMAT_VERSION } from './schema.js';

/** What a field may hold. */
type FieldType = 'string' | 'number' | 'boolean' | 'object' | 'strings' | 'id' | 'id-or-null' | 'number-or-null' | 'string-or-null' | 'dir' | 'tool-calls' | 'tool-results' | 'chunk-marks' | 'rpc-error' | 'error' | 'evicted-requests';

/** A kind's fields: `name` is required, `name?` optional. */
type Shape = Record<string, FieldType>;

const BASE: Shape = { v: 'number', time: 'number', seq: 'number', session: 'string', channel: 'string', label: 'string', kind: 'string', msg: 'string', 'level?': 'number', 'dir?': 'dir', 'redacted?': 'boolean' };
const FRAME: Shape = { bytes: 'number', raw: 'string', 'rawEncoding?': 'string', 'truncated?': 'boolean', 'sha256?': 'string', 'crlf?': 'boolean', 'batch?': 'object', 'exchange?': 'string', 'sseId?': 'string' };

/** The fields of each kind, besides BASE. */
const SHAPES: Record<string, Shape> = {
  request: { ...FRAME, dir: 'dir', id: 'id', method: 'string', 'tool?': 'string', 'progressToken?': 'id' },
  response: { ...FRAME, dir: 'dir', id: 'id-or-null', 'method?': 'string', 'tool?': 'string', 'latencyMs?': 'number', 'requestSeq?': 'number', 'afterPending?': 'boolean', 'error?': 'rpc-error', 'isError?': 'boolean' },
  notification: { ...FRAME, dir: 'dir', method: 'string', 'relatedId?': 'id-or-null', 'relatedMethod?': 'string', 'requestSeq?': 'number', 'progressToken?': 'id' },
  invalid: { ...FRAME, dir: 'dir', reason: 'string', 'partial?': 'boolean', 'id?': 'id-or-null', 'method?': 'string' },
  stderr: { text: 'string', bytes: 'number', 'truncated?': 'boolean' },
  pending: { dir: 'dir', id: 'id', method: 'string', requestSeq: 'number', ageMs: 'number', 'tool?': 'string', 'cancelled?': 'boolean', 'evicted?': 'boolean' },
  evicted: { requests: 'evicted-requests' },
  lifecycle: {
    event: 'string',
    'mcptapVersion?': 'string',
    'command?': 'string',
    'args?': 'strings',
    'pid?': 'number',
    'childPid?': 'number',
    'cwd?': 'string',
    'target?': 'string',
    'listen?': 'string',
    'code?': 'number-or-null',
    'signal?': 'string-or-null',
    'durationMs?': 'number',
    'stderrTail?': 'strings',
    'dropped?': 'number',
    'uninspectedBytes?': 'number',
    'stream?': 'string',
  },
  'http-request': { exchange: 'string', method: 'string', path: 'string', headers: 'object', bodyBytes: 'number', 'body?': 'string', 'bodyEncoding?': 'string', 'bodyTruncated?': 'boolean' },
  'http-response': { exchange: 'string', status: 'number', headers: 'object', ttfbMs: 'number' },
  'http-end': {
    exchange: 'string',
    method: 'string',
    path: 'string',
    outcome: 'string',
    reqBytes: 'number',
    resBytes: 'number',
    durationMs: 'number',
    'status?': 'number',
    'body?': 'string',
    'bodyEncoding?': 'string',
    'bodyTruncated?': 'boolean',
    'bodyInChunks?': 'number',
    'bodyInEvents?': 'number',
    'eventLineEnd?': 'string',
    'bodyInFrames?': 'number',
    'bodyAround?': 'strings',
    'chunks?': 'chunk-marks',
    'error?': 'error',
    'uninspectedBytes?': 'number',
    'replyComplete?': 'boolean',
  },
  sse: { exchange: 'string', 'event?': 'string', 'id?': 'string', 'retry?': 'number', 'data?': 'string', 'comment?': 'string' },
  'llm-request': { exchange: 'string', endpoint: 'string', stream: 'boolean', messageCount: 'number', tools: 'strings', toolResults: 'tool-results', 'model?': 'string', 'historyToolCalls?': 'tool-calls', 'prompt?': 'string' },
  'llm-chunk': { exchange: 'string', sinceMs: 'number', raw: 'string', 'event?': 'string', 'delta?': 'string' },
  'llm-response': {
    exchange: 'string',
    endpoint: 'string',
    status: 'number',
    content: 'string',
    toolCalls: 'tool-calls',
    durationMs: 'number',
    'model?': 'string',
    'thinking?': 'string',
    'finishReason?': 'string',
    'usage?': 'object',
    'truncated?': 'boolean',
    'ttftMs?': 'number',
    'chunkCount?': 'number',
  },
  'llm-error': { exchange: 'string', endpoint: 'string', status: 'number', phase: 'string', error: 'string' },
};

interface Field {
  name: string;
  optional: boolean;
  type: FieldType;
}

/** Each kind's fields, BASE included, as a list: built once, walked for every record read. */
const FIELDS = new Map<string, Field[]>(
  Object.entries(SHAPES).map(([kind, shape]) => [
    kind,
    Object.entries({ ...BASE, ...shape }).map(([spec, type]) => ({ name: spec.replace(/\?$/, ''), optional: spec.endsWith('?'), type })),
  ]),
);

/** Why `o` (a JSON object with `v`, `kind` and `time`) is not a record readers can use, or undefined when it is. */
export function recordProblem(o: Record<string, unknown>): string | undefined {
  const fields = Object.hasOwn(SHAPES, o.kind as string) ? FIELDS.get(o.kind as string) : undefined;
  if (!fields) {
    // A kind from a newer mcptap: its readers know it; this one passes it on and its views leave it out.
    if ((o.v as number) > LOG_FORMAT_VERSION) return undefined;
    return `a record of an unknown kind "${String(o.kind).slice(0, 40)}"`;
  }
  const missing: string[] = [];
  const wrong: string[] = [];
  for (const { name, optional, type } of fields) {
    const value = o[name];
    if (value === undefined) {
      if (!optional) missing.push(name);
    } else if (!fits(value, type)) wrong.push(`${name} (${describe(type)})`);
  }
  if (missing.length === 0 && wrong.length === 0) return undefined;
  const parts: string[] = [];
  if (missing.length) parts.push(`without ${list(missing)}`);
  if (wrong.length) parts.push(`with a wrong type for ${list(wrong)}`);
  // "an llm-…", "an http-…", "an invalid", "an sse": as they are read aloud.
  const article = /^(llm|http|sse|invalid|evicted)/.test(o.kind as string) ? 'an' : 'a';
  return `${article} ${o.kind} record ${parts.join(' and ')}`;
}

function fits(value: unknown, type: FieldType): boolean {
  switch (type) {
    case 'string':
    case 'number':
    case 'boolean':
      return typeof value === type && (type !== 'number' || Number.isFinite(value));
    case 'object':
      return isObject(value);
    case 'strings':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
    case 'id':
      return typeof value === 'string' || typeof value === 'number';
    case 'id-or-null':
      return value === null || typeof value === 'string' || typeof value === 'number';
    case 'number-or-null':
      return value === null || typeof value === 'number';
    case 'string-or-null':
      return value === null || typeof value === 'string';
    case 'dir':
      return value === 'c2s' || value === 's2c';
    case 'tool-calls':
      return Array.isArray(value) && value.every((c) => isObject(c) && typeof c.name === 'string');
    case 'tool-results':
      return Array.isArray(value) && value.every((r) => isObject(r) && typeof r.content === 'string');
    case 'chunk-marks':
      return Array.isArray(value) && value.every((m) => Array.isArray(m) && m.length === 2 && typeof m[0] === 'number' && typeof m[1] === 'number');
    case 'rpc-error':
      return isObject(value) && typeof value.code === 'number' && typeof value.message === 'string';
    case 'error':
      return isObject(value) && typeof value.message === 'string';
    case 'evicted-requests':
      return Array.isArray(value) && value.length > 0 && value.every(isEvictedRequest);
  }
}

/** An entry of an `evicted` record: the fields a `pending` record of it needs. */
function isEvictedRequest(e: unknown): boolean {
  if (!isObject(e)) return false;
  return fits(e.dir, 'dir') && fits(e.id, 'id') && fits(e.method, 'string') && fits(e.requestSeq, 'number') && fits(e.ageMs, 'number') && (e.tool === undefined || fits(e.tool, 'string'));
}

function describe(type: FieldType): string {
  switch (type) {
    case 'strings':
      return 'a list of strings';
    case 'id':
      return 'a string or number';
    case 'id-or-null':
      return 'a string, number or null';
    case 'number-or-null':
      return 'a number or null';
    case 'string-or-null':
      return 'a string or null';
    case 'dir':
      return '"c2s" or "s2c"';
    case 'tool-calls':
      return 'a list of tool calls with a name';
    case 'tool-results':
      return 'a list of tool results with content';
    case 'chunk-marks':
      return 'a list of [ms, bytes] pairs';
    case 'rpc-error':
      return 'an object with a numeric code and a message';
    case 'error':
      return 'an object with a message';
    case 'evicted-requests':
      return 'a list of requests, each with a dir, id, method, requestSeq and ageMs';
    default:
      return `a${type === 'object' ? 'n' : ''} ${type}`;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function list(names: string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}
