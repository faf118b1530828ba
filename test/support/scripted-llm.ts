/**
 * A scripted OpenAI-compatible upstream for tests of stream endings: a POST to /v1/chat/completions gets one
 * streamed tool call (get_weather, in four chunks; or, when the request carries a tool result, a short answer),
 * then `data: [DONE]`, then the response ends `gapMs` later; or, with `cutBeforeDone`, the connection is
 * destroyed before `[DONE]` was sent. A real HTTP server on port 0, so the real `openai` clients and
 * `mcptap http` meet real sockets.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedLlm {
  url: string;
  /** Milliseconds between `[DONE]` and the end of the response, for the following requests. */
  gapMs: number;
  /** Milliseconds between the last chunk (the one that completes the reply) and `[DONE]`. */
  doneDelayMs: number;
  cutBeforeDone: boolean;
  close(): Promise<void>;
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-test', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** The stream's chunks before `[DONE]`: a tool call whose arguments arrive in two pieces, then its finish. */
export const TOOL_CALL_CHUNKS = [
  chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  chunk({}, 'tool_calls'),
];

/** The answer to a request that carries the tool's result back. */
export const ANSWER_CHUNKS = [chunk({ role: 'assistant', content: 'It is ' }), chunk({ content: 'sunny in Paris.' }), chunk({}, 'stop')];

export async function startScriptedLlm(options: { gapMs?: number; doneDelayMs?: number; cutBeforeDone?: boolean } = {}): Promise<ScriptedLlm> {
  const state = { gapMs: options.gapMs ?? 0, doneDelayMs: options.doneDelayMs ?? 0, cutBeforeDone: options.cutBeforeDone ?? false };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunks = body.includes('"role":"tool"') ? ANSWER_CHUNKS : TOOL_CALL_CHUNKS;
      for (const c of chunks.slice(0, state.cutBeforeDone ? 3 : undefined)) res.write(c);
      if (state.cutBeforeDone) {
        setTimeout(() => res.socket?.destroy(), 5);
        return;
      }
      const done = (): void => {
        res.write('data: [DONE]\n\n');
        if (state.gapMs === 0) res.end();
        else setTimeout(() => res.end(), state.gapMs);
      };
      if (state.doneDelayMs === 0) done();
      else setTimeout(done, state.doneDelayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const llm: ScriptedLlm = {
    url: `http://127.0.0.1:${port}`,
    get gapMs() {
      return state.gapMs;
    },
    set gapMs(ms: number) {
      state.gapMs = ms;
    },
    get doneDelayMs() {
      return state.doneDelayMs;
    },
    set doneDelayMs(ms: number) {
      state.doneDelayMs = ms;
    },
    get cutBeforeDone() {
      return state.cutBeforeDone;
    },
    set cutBeforeDone(cut: boolean) {
      state.cutBeforeDone = cut;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return llm;
}
