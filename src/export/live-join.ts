/**
 * The live round-trip join: a tap streaming spans sees only its own traffic, but the model's tool call that a
 * `tools/call` ran is in the LLM proxy's log, in the same folder. When the MCP tap has a `tools/call` span to send,
 * this reads what the other logs in the folder gained since the last look (only `llm-response` lines with tool
 * calls are parsed) and finds the model call the same way the trace linker does (same tool, through the host's
 * renaming of it: trace/tool-names.ts, with this server's names; same canonical arguments; the model's reply before the call, within the window). The span then goes into
 * the LLM call's trace as its child — the ids are derived from the LLM log, so the LLM proxy's own live span has
 * exactly that id.
 *
 * Reading starts at the end of the files present at start-up: old sessions are not scanned. The folder is walked
 * as every reader walks it (log/walk.ts: subfolders too, never a named pipe).
 */
import type { LlmResponseRecord } from '../log/schema.js';
import { canonicalJson, DEFAULT_LINK_WINDOW_MS } from '../trace/link.js';
import { ToolNameMap } from '../trace/tool-names.js';
import { LogTail } from '../ui/tail.js';
import { liveLlmTraceId, llmSpanId } from './otlp-spans.js';

/** How long before the model's reply completed a `tools/call` may start (hosts that act on a streamed chunk). */
const LEAD_MS = 5000;
/** Model tool calls kept for matching (the most recent ones). */
const MAX_CALLS = 2000;

interface ModelCall {
  name: string;
  canonical: string;
  time: number;
  session: string;
  exchange: string;
  used: boolean;
}

/** Finds, for a `tools/call`, the LLM call whose reply asked for it, in the other logs of a folder. */
export class LiveToolCallIndex {
  private readonly tail: LogTail;
  private calls: ModelCall[] = [];

  constructor(
    dir: string,
    ownFile: string | undefined,
    private readonly windowMs = DEFAULT_LINK_WINDOW_MS,
  ) {
    this.tail = new LogTail(dir, { fromEnd: true, accept: (line) => line.includes('"llm-response"') && line.includes('"toolCalls":[{'), ...(ownFile !== undefined ? { skip: ownFile } : {}) });
  }

  /** Read what the other logs gained since the last call. */
  async refresh(): Promise<void> {
    for (const r of await this.tail.poll()) {
      if (r.kind !== 'llm-response') continue;
      const reply = r as LlmResponseRecord;
      for (const call of reply.toolCalls) {
        this.calls.push({ name: call.name, canonical: canonicalJson(call.arguments), time: reply.time, session: reply.session, exchange: reply.exchange, used: false });
      }
    }
    if (this.calls.length > MAX_CALLS) this.calls = this.calls.slice(this.calls.length - MAX_CALLS);
  }

  /**
   * The LLM span a `tools/call` of `tool` with `args`, sent at `time`, belongs under; each model call is used once.
   * `serverNames`: this server's names (its serverInfo.name, the tap's label), which hosts prefix its tools with.
   */
  find(tool: string, args: unknown, time: number, serverNames: readonly string[] = []): { traceId: string; spanId: string; session: string; exchange: string } | undefined {
    const canonical = canonicalJson(args);
    const names = new ToolNameMap([{ session: 'self', names: serverNames, tools: [tool] }]);
    let best: ModelCall | undefined;
    for (const c of this.calls) {
      // A host may act on the chunk that carried the call, before the reply completed: allow a little lead.
      if (c.used || c.time - time > LEAD_MS || time - c.time > this.windowMs) continue;
      if (c.canonical !== canonical || names.resolve(c.name).length === 0) continue;
      // The earliest unused one: calls are run in the order the model asked for them.
      if (!best || c.time < best.time) best = c;
    }
    if (!best) return undefined;
    best.used = true;
    return { traceId: liveLlmTraceId(best.session, best.exchange), spanId: llmSpanId(best.session, best.exchange), session: best.session, exchange: best.exchange };
  }
}
