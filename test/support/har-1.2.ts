/**
 * The required structure of a HAR 1.2 archive, written from the spec (W3C Web Performance WG draft "HTTP Archive
 * (HAR) format", version 1.2): every required field, its type, and the rules on timings. Returns the problems
 * found, each as a path and what is wrong; an empty list means the archive has the HAR 1.2 shape.
 */
export function harProblems(har: unknown): string[] {
  const problems: string[] = [];
  const bad = (path: string, what: string): void => {
    problems.push(`${path}: ${what}`);
  };
  const obj = (v: unknown, path: string): Record<string, unknown> | undefined => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      bad(path, 'must be an object');
      return undefined;
    }
    return v as Record<string, unknown>;
  };
  const str = (o: Record<string, unknown>, key: string, path: string): void => {
    if (typeof o[key] !== 'string') bad(`${path}.${key}`, 'must be a string');
  };
  const int = (o: Record<string, unknown>, key: string, path: string, min = -1): void => {
    const v = o[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) bad(`${path}.${key}`, `must be a number ≥ ${min}`);
  };
  const nameValues = (v: unknown, path: string): void => {
    if (!Array.isArray(v)) return bad(path, 'must be an array');
    v.forEach((item, i) => {
      const o = obj(item, `${path}[${i}]`);
      if (o) {
        str(o, 'name', `${path}[${i}]`);
        str(o, 'value', `${path}[${i}]`);
      }
    });
  };
  const root = obj(har, 'har');
  const log = root && obj(root.log, 'log');
  if (!log) return problems;
  if (log.version !== '1.2' && log.version !== '1.1') bad('log.version', 'must be "1.2"');
  const creator = obj(log.creator, 'log.creator');
  if (creator) {
    str(creator, 'name', 'log.creator');
    str(creator, 'version', 'log.creator');
  }
  if (log.pages !== undefined && !Array.isArray(log.pages)) bad('log.pages', 'must be an array when present');
  if (!Array.isArray(log.entries)) {
    bad('log.entries', 'must be an array');
    return problems;
  }
  let previous = '';
  log.entries.forEach((e, i) => {
    const p = `log.entries[${i}]`;
    const entry = obj(e, p);
    if (!entry) return;
    str(entry, 'startedDateTime', p);
    const started = String(entry.startedDateTime);
    // ISO 8601 with time zone, e.g. 2009-07-24T19:20:30.45+01:00.
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(started)) bad(`${p}.startedDateTime`, 'must be an ISO 8601 date-time with zone');
    if (started < previous) bad(`${p}.startedDateTime`, 'entries should be sorted by start time');
    previous = started;
    int(entry, 'time', p, 0);
    const req = obj(entry.request, `${p}.request`);
    if (req) {
      for (const k of ['method', 'url', 'httpVersion']) str(req, k, `${p}.request`);
      nameValues(req.cookies, `${p}.request.cookies`);
      nameValues(req.headers, `${p}.request.headers`);
      nameValues(req.queryString, `${p}.request.queryString`);
      int(req, 'headersSize', `${p}.request`);
      int(req, 'bodySize', `${p}.request`);
      if (req.postData !== undefined) {
        const pd = obj(req.postData, `${p}.request.postData`);
        if (pd) {
          str(pd, 'mimeType', `${p}.request.postData`);
          if (typeof pd.text !== 'string' && !Array.isArray(pd.params)) bad(`${p}.request.postData`, 'needs text or params');
        }
      }
      try {
        new URL(String(req.url));
      } catch {
        bad(`${p}.request.url`, 'must be an absolute URL');
      }
    }
    const res = obj(entry.response, `${p}.response`);
    if (res) {
      int(res, 'status', `${p}.response`, 0);
      for (const k of ['statusText', 'httpVersion', 'redirectURL']) str(res, k, `${p}.response`);
      nameValues(res.cookies, `${p}.response.cookies`);
      nameValues(res.headers, `${p}.response.headers`);
      int(res, 'headersSize', `${p}.response`);
      int(res, 'bodySize', `${p}.response`);
      const content = obj(res.content, `${p}.response.content`);
      if (content) {
        int(content, 'size', `${p}.response.content`);
        str(content, 'mimeType', `${p}.response.content`);
        if (content.text !== undefined && typeof content.text !== 'string') bad(`${p}.response.content.text`, 'must be a string');
      }
    }
    obj(entry.cache, `${p}.cache`);
    const t = obj(entry.timings, `${p}.timings`);
    if (t) {
      for (const k of ['send', 'wait', 'receive']) int(t, k, `${p}.timings`, 0);
      for (const k of ['blocked', 'dns', 'connect', 'ssl']) if (t[k] !== undefined) int(t, k, `${p}.timings`, -1);
      // entry.time is the sum of the timings that apply (-1 means "does not apply"; ssl is inside connect).
      const sum = ['blocked', 'dns', 'connect', 'send', 'wait', 'receive'].reduce((s, k) => s + (typeof t[k] === 'number' && (t[k] as number) > 0 ? (t[k] as number) : 0), 0);
      if (typeof entry.time === 'number' && Math.abs(sum - entry.time) > 0.01) bad(`${p}.time`, `must equal the sum of its timings (${sum})`);
    }
    for (const key of Object.keys(entry)) {
      if (!['startedDateTime', 'time', 'request', 'response', 'cache', 'timings', 'serverIPAddress', 'connection', 'comment', 'pageref'].includes(key) && !key.startsWith('_')) {
        bad(`${p}.${key}`, 'is not a HAR field (custom fields must start with _)');
      }
    }
  });
  return problems;
}
