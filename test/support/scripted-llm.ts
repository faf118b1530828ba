/**
 * A scripted OpenAI-compatible upstream for tests of stream endings: every POST to /v1/chat/completions gets
 * one streamed tool call (get_weather, in three chunks), then `data: [DONE]`, then the response ends `gapMs`
 * later; or, with `cutBeforeDone`, the connection is destroyed before `[DONE]` was sent. A real HTTP server on
 * port 0, so the real `openai` clients and `mcptap http` meet real sockets.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedLlm {
  url: string;
  /** Milliseconds between `[DONE]` and the end of the response, for the following requests. */
  gapMs: number;
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

export async function startScriptedLlm(options: { gapMs?: number; cutBeforeDone?: boolean } = {}): Promise<ScriptedLlm> {
  const state = { gapMs: options.gapMs ?? 0, cutBeforeDone: options.cutBeforeDone ?? false };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const c of TOOL_CALL_CHUNKS.slice(0, state.cutBeforeDone ? 3 : undefined)) res.write(c);
      if (state.cutBeforeDone) {
        setTimeout(() => res.socket?.destroy(), 5);
        return;
      }
      res.write('data: [DONE]\n\n');
      if (state.gapMs === 0) res.end();
      else setTimeout(() => res.end(), state.gapMs);
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
