/**
 * Which MCP server tool a model-side tool name stands for. Hosts rename the tools they offer the model:
 * `weather__get_weather`, `mcp__weather__get_weather` (Claude Code), `weather___get_weather`,
 * `weather_get_weather`, `mcp_weather_get_weather`, `weather.get_weather`, `weather/get_weather`, and cut long
 * names to OpenAI's 64 characters. The map is what the logs themselves hold: each server's tools (its tools/list
 * and the calls it ran) under its names (serverInfo.name, the tap's label), and the tools offered in the same
 * LLM request, whose shared prefixes tell which server a name belongs to when the host's prefix is none of the
 * server's names (an mcpServers key mcptap never sees). Pure.
 */

/** One MCP server as the map sees it: the names a host may prefix its tools with, and the tools. */
export interface ToolServer {
  session: string;
  /** serverInfo.name, the tap's label: what a host's prefix may be made from. */
  names: readonly string[];
  tools: readonly string[];
}

/** A server tool a model-side name stands for. */
export interface ToolTarget {
  /** The tool's name on the server (what `tools/call` carries). */
  tool: string;
  /** The sessions of the servers that have it under that name. */
  sessions: ReadonlySet<string>;
  /** How the host renamed it: `same name`, `server__tool`, `mcp__server__tool`, `server_tool`, …, `shortened to 64 characters`. */
  scheme: string;
}

/** Host prefixes are joined to the tool by one of these, longest first (`___` before `__` before `_`). */
const SEPARATORS = ['___', '__', '_', '.', '/', ':'] as const;
/** Hosts shorten names to the model API's limit (OpenAI: 64 characters); a name this long may be such a cut. */
const SHORTENED_FROM = 60;
/** A cut tool name must keep at least this much of the tool, or a prefix would match too much. */
const MIN_KEPT = 4;

/** Strength of a match, best first: the linker takes the best rank that finds a call. */
const RANK = { same: 0, knownPrefix: 1, offeredPrefix: 2, anyPrefix: 3 } as const;

interface Candidate extends ToolTarget {
  rank: number;
  /** The part before the separator, and the separator, when the name has a prefix. */
  head?: string;
  sep?: string;
}

/** The tool map of one set of logs. */
export class ToolNameMap {
  private readonly sessionsByTool = new Map<string, Set<string>>();
  /** Every server's names, as hosts may write them, by session. */
  private readonly prefixes = new Map<string, Set<string>>();
  private readonly cache = new Map<string, Candidate[]>();
  private readonly requestCache = new WeakMap<readonly string[], Map<string, ToolTarget[]>>();

  constructor(servers: readonly ToolServer[]) {
    for (const s of servers) {
      for (const tool of s.tools) {
        const set = this.sessionsByTool.get(tool) ?? new Set<string>();
        set.add(s.session);
        this.sessionsByTool.set(tool, set);
      }
      const prefixes = this.prefixes.get(s.session) ?? new Set<string>();
      for (const name of s.names) for (const p of prefixForms(name)) prefixes.add(p);
      this.prefixes.set(s.session, prefixes);
    }
  }

  /**
   * The server tools `name` may stand for, best first. `offered`: the tool names of the LLM request the call
   * answers; a prefix shared by the offered names of one server narrows the servers, and a single `_` after a
   * prefix that is none of the server's names is believed only when the offered tools show it.
   */
  resolve(name: string, offered: readonly string[] = []): ToolTarget[] {
    if (offered.includes(name)) {
      const mapped = this.mapOffered(offered).get(name);
      if (mapped) return mapped;
    }
    // A single `_` after a prefix that is none of the server's names: `get_weather` is not `get` + `weather`.
    return this.candidates(name)
      .filter((c) => c.rank !== RANK.anyPrefix || c.sep !== '_')
      .map(target);
  }

  /** Every offered name of one LLM request, resolved with what the whole list shows. */
  mapOffered(offered: readonly string[]): Map<string, ToolTarget[]> {
    const known = this.requestCache.get(offered);
    if (known) return known;
    const all = new Map<string, Candidate[]>();
    for (const name of new Set(offered)) all.set(name, this.candidates(name));
    // A prefix the host put on the tools of one server: the sessions every name under it can belong to.
    const byHead = new Map<string, Set<string>>();
    for (const list of all.values()) {
      const heads = new Map<string, Set<string>>();
      for (const c of list) {
        if (c.head === undefined) continue;
        const set = heads.get(c.head) ?? new Set<string>();
        for (const s of c.sessions) set.add(s);
        heads.set(c.head, set);
      }
      for (const [head, sessions] of heads) {
        const seen = byHead.get(head);
        byHead.set(head, seen ? new Set([...seen].filter((s) => sessions.has(s))) : sessions);
      }
    }
    const out = new Map<string, ToolTarget[]>();
    for (const [name, list] of all) {
      const narrowed: Candidate[] = [];
      for (const c of list) {
        if (c.head === undefined || c.rank === RANK.knownPrefix) {
          narrowed.push(c);
          continue;
        }
        const common = byHead.get(c.head);
        const sessions = new Set([...c.sessions].filter((s) => common?.has(s)));
        if (sessions.size > 0) narrowed.push({ ...c, sessions, rank: RANK.offeredPrefix });
        // A prefix the offered names of no one server share: believed only with a separator no tool name has.
        else if (c.sep !== '_') narrowed.push(c);
      }
      out.set(name, narrowed.sort(byRank).map(target));
    }
    this.requestCache.set(offered, out);
    return out;
  }

  private candidates(name: string): Candidate[] {
    const cached = this.cache.get(name);
    if (cached) return cached;
    const found: Candidate[] = [];
    const exact = this.sessionsByTool.get(name);
    if (exact) found.push({ tool: name, sessions: exact, scheme: 'same name', rank: RANK.same });
    for (const { head, sep, rest } of splits(name)) {
      for (const [tool, sessions] of this.toolsFor(rest, name.length)) {
        const known = new Set([...sessions].filter((s) => this.prefixes.get(s)?.has(stripMcp(head, sep))));
        const scheme = tool === rest ? schemeOf(head, sep) : `shortened to ${name.length} characters`;
        if (known.size > 0) found.push({ tool, sessions: known, scheme, rank: RANK.knownPrefix, head, sep });
        else found.push({ tool, sessions, scheme, rank: RANK.anyPrefix, head, sep });
      }
    }
    found.sort(byRank);
    this.cache.set(name, found);
    return found;
  }

  /** Server tools named `rest`, or, for a name long enough to have been cut, starting with it. */
  private toolsFor(rest: string, nameLength: number): [string, Set<string>][] {
    const exact = this.sessionsByTool.get(rest);
    const out: [string, Set<string>][] = exact ? [[rest, exact]] : [];
    if (nameLength >= SHORTENED_FROM && rest.length >= MIN_KEPT) {
      for (const [tool, sessions] of this.sessionsByTool) if (tool !== rest && tool.startsWith(rest)) out.push([tool, sessions]);
    }
    return out;
  }
}

/** Every way to read `name` as prefix + separator + tool, the separator taken whole (`___` is not `__` + `_`). */
function splits(name: string): { head: string; sep: string; rest: string }[] {
  const out: { head: string; sep: string; rest: string }[] = [];
  for (let i = 1; i < name.length - 1; i++) {
    for (const sep of SEPARATORS) {
      if (!name.startsWith(sep, i)) continue;
      // Only a separator whole: not the middle or end of a longer run of underscores.
      if (sep[0] === '_' && (name[i - 1] === '_' || name[i + sep.length] === '_')) continue;
      const rest = name.slice(i + sep.length);
      if (rest !== '') out.push({ head: name.slice(0, i), sep, rest });
      break;
    }
  }
  return out;
}

/** The scheme's name for findings: `mcp__server__tool`, `server_tool`, `server.tool`, … */
function schemeOf(head: string, sep: string): string {
  if (sep === '__' && head.startsWith('mcp__')) return 'mcp__server__tool';
  if (sep === '_' && head.startsWith('mcp_')) return 'mcp_server_tool';
  return `server${sep}tool`;
}

/** The server part of a prefix: `mcp__weather` → `weather` under `__`, `mcp_weather` → `weather` under `_`. */
function stripMcp(head: string, sep: string): string {
  return head.startsWith(`mcp${sep}`) ? head.slice(3 + sep.length) : head;
}

/** A server name as hosts write it in a prefix: as it is, and with what tool names may not hold replaced. */
function prefixForms(name: string): string[] {
  return [...new Set([name, name.replace(/[^A-Za-z0-9_-]/g, '_'), name.replace(/[^A-Za-z0-9]/g, '_'), name.toLowerCase(), name.toLowerCase().replace(/[^a-z0-9]/g, '_')])];
}

function byRank(a: Candidate, b: Candidate): number {
  return a.rank - b.rank || b.tool.length - a.tool.length;
}

function target(c: Candidate): ToolTarget {
  return { tool: c.tool, sessions: c.sessions, scheme: c.scheme };
}
