/**
 * The classic agent loop of MCP tutorials, written once per LLM client — `ollama`, `openai`, `@anthropic-ai/sdk`
 * and `@google/genai` — over tools served by an MCP client session:
 *
 *   send the question and the MCP tools to the model → the model answers with a tool call → call the MCP tool →
 *   send the result back with the history → the model answers in words.
 *
 * This is what `mcptap demo` runs and what the trace tests drive; it is deliberately the plain loop people copy,
 * so the trace shows what real agents do. The clients are loaded on demand (nothing but the demo needs them, and
 * every other command starts faster without them); `ollama` and `openai` are dependencies of mcptap, the other
 * two are used when installed next to it (see load).
 */
import { McptapError } from '../types.js';

/** An MCP tool as `tools/list` gives it. */
export interface McpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** The agent's access to MCP: the tools, and a way to call one (through an MCP client session). */
export interface Toolbox {
  /** The MCP server's name from its initialize answer (Claude Code names its tools `mcp__<server>__<tool>`). */
  server?: string;
  tools: McpTool[];
  /** Call a tool; returns the text the model should see (text blocks joined). */
  call(name: string, args: Record<string, unknown>): Promise<string>;
}

/**
 * What a toolbox needs of an MCP client: the SDK's Client has these two methods. Described structurally so this
 * module does not load the SDK when nothing uses the demo.
 */
export interface McpToolClient {
  listTools(): Promise<{ tools: { name: string; description?: string; inputSchema: unknown }[] }>;
  /** The SDK's result may also be the legacy `{toolResult}` shape, which has no content. */
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<object>;
  getServerVersion?(): { name: string } | undefined;
}

/** The tools an MCP client session lists, as a Toolbox: results become their text blocks, joined by lines. */
export async function toolboxFrom(client: McpToolClient): Promise<Toolbox> {
  const { tools } = await client.listTools();
  const server = client.getServerVersion?.()?.name;
  return {
    ...(server !== undefined ? { server } : {}),
    tools: tools.map((t) => ({ name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), inputSchema: t.inputSchema as McpTool['inputSchema'] })),
    async call(name, args) {
      const result = (await client.callTool({ name, arguments: args })) as { content?: unknown };
      const content = Array.isArray(result.content) ? (result.content as { type: string; text?: string }[]) : [];
      return content.map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join('\n');
    },
  };
}

export interface AgentOptions {
  /** Base URL of the LLM API (for the demo: the mcptap HTTP proxy in front of the LLM). */
  baseUrl: string;
  model: string;
  prompt: string;
  toolbox: Toolbox;
  /** Give up after this many model calls (a model that keeps calling tools must not loop forever). */
  maxRounds?: number;
  /** Ask for streamed replies (NDJSON from Ollama, SSE from OpenAI) and put them together, as most agents do. */
  stream?: boolean;
}

/** What the loop did. */
export interface AgentRun {
  answer: string;
  toolCalls: { name: string; arguments: Record<string, unknown>; result: string }[];
  llmCalls: number;
}

/** The loop with the `ollama` client: tool calls arrive as objects; results go back as `role: "tool"` with `tool_name`. */
export async function runOllamaAgent(options: AgentOptions): Promise<AgentRun> {
  const { Ollama } = await load<typeof import('ollama')>('ollama');
  const ollama = new Ollama({ host: options.baseUrl });
  const tools = options.toolbox.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description ?? '', parameters: t.inputSchema as never },
  }));
  const messages: import('ollama').Message[] = [{ role: 'user', content: options.prompt }];
  const run: AgentRun = { answer: '', toolCalls: [], llmCalls: 0 };
  for (let round = 0; round < (options.maxRounds ?? 5); round++) {
    let message: import('ollama').Message;
    if (options.stream) {
      // Ollama sends each tool call whole in one chunk; text comes in pieces.
      message = { role: 'assistant', content: '' };
      for await (const part of await ollama.chat({ model: options.model, messages, tools, stream: true })) {
        message.content += part.message.content;
        if (part.message.tool_calls?.length) message.tool_calls = [...(message.tool_calls ?? []), ...part.message.tool_calls];
      }
    } else {
      message = (await ollama.chat({ model: options.model, messages, tools, stream: false })).message;
    }
    run.llmCalls++;
    messages.push(message);
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) {
      run.answer = message.content;
      return run;
    }
    for (const call of calls) {
      const args = call.function.arguments ?? {};
      const result = await options.toolbox.call(call.function.name, args);
      run.toolCalls.push({ name: call.function.name, arguments: args, result });
      messages.push({ role: 'tool', content: result, tool_name: call.function.name });
    }
  }
  return run;
}

/** The loop with the `openai` client: arguments arrive as a JSON string; results go back with `tool_call_id`. */
export async function runOpenAiAgent(options: AgentOptions): Promise<AgentRun> {
  const { default: OpenAI } = await load<typeof import('openai')>('openai');
  // A stand-in key: the proxy logs headers with secrets redacted, and the recorded upstream does not check it.
  const openai = new OpenAI({ baseURL: `${options.baseUrl.replace(/\/$/, '')}/v1`, apiKey: 'sk-demo-not-a-real-key', maxRetries: 0 });
  const tools = options.toolbox.tools.map((t) => ({
    type: 'function' as const,
    function: { name: t.name, description: t.description ?? '', parameters: t.inputSchema },
  }));
  const messages: import('openai').OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: options.prompt }];
  const run: AgentRun = { answer: '', toolCalls: [], llmCalls: 0 };
  for (let round = 0; round < (options.maxRounds ?? 5); round++) {
    const message = options.stream
      ? await streamOpenAi(openai, { model: options.model, messages, tools, tool_choice: 'auto' })
      : (await openai.chat.completions.create({ model: options.model, messages, tools, tool_choice: 'auto' })).choices[0]?.message;
    run.llmCalls++;
    if (!message) break;
    messages.push(message);
    const calls = (message.tool_calls ?? []).filter((c) => c.type === 'function');
    if (calls.length === 0) {
      run.answer = message.content ?? '';
      return run;
    }
    for (const call of calls) {
      let args: Record<string, unknown> = {};
      try {
        args = JSON.parse(call.function.arguments || '{}') as Record<string, unknown>;
      } catch {
        // A model that wrote broken JSON: call with no arguments; the server's error goes back to the model.
      }
      const result = await options.toolbox.call(call.function.name, args);
      run.toolCalls.push({ name: call.function.name, arguments: args, result });
      messages.push({ role: 'tool', tool_call_id: call.id, content: result });
    }
  }
  return run;
}

/**
 * The loop with the `@anthropic-ai/sdk` client, the way Claude Code runs it: MCP tools offered to the model as
 * `mcp__<server>__<tool>`, tool inputs as objects, results sent back in a user message as `tool_result` blocks
 * carrying the `tool_use` id, and the assistant's content (thinking included) kept in the history.
 */
export async function runAnthropicAgent(options: AgentOptions): Promise<AgentRun> {
  const { default: Anthropic } = await load<typeof import('@anthropic-ai/sdk')>('@anthropic-ai/sdk');
  // A stand-in key: the proxy logs headers with secrets redacted, and the recorded upstream does not check it.
  const anthropic = new Anthropic({ baseURL: options.baseUrl, apiKey: 'sk-ant-demo-not-a-real-key', maxRetries: 0 });
  const prefix = `mcp__${options.toolbox.server ?? 'server'}__`;
  const tools = options.toolbox.tools.map((t) => ({ name: `${prefix}${t.name}`, description: t.description ?? '', input_schema: t.inputSchema as { type: 'object' } }));
  const messages: import('@anthropic-ai/sdk').Anthropic.MessageParam[] = [{ role: 'user', content: options.prompt }];
  const run: AgentRun = { answer: '', toolCalls: [], llmCalls: 0 };
  for (let round = 0; round < (options.maxRounds ?? 5); round++) {
    const body = { model: options.model, max_tokens: 1024, messages, tools };
    // The SDK's stream helper puts the events back together (text deltas, input_json_delta pieces).
    const message = options.stream ? await anthropic.messages.stream(body).finalMessage() : await anthropic.messages.create(body);
    run.llmCalls++;
    messages.push({ role: 'assistant', content: message.content });
    const calls = message.content.filter((b) => b.type === 'tool_use');
    if (calls.length === 0) {
      run.answer = message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      return run;
    }
    const results: import('@anthropic-ai/sdk').Anthropic.ToolResultBlockParam[] = [];
    for (const call of calls) {
      const name = call.name.startsWith(prefix) ? call.name.slice(prefix.length) : call.name;
      const args = (call.input ?? {}) as Record<string, unknown>;
      const result = await options.toolbox.call(name, args);
      run.toolCalls.push({ name, arguments: args, result });
      results.push({ type: 'tool_result', tool_use_id: call.id, content: result });
    }
    messages.push({ role: 'user', content: results });
  }
  return run;
}

/**
 * The loop with the `@google/genai` client: tools as `functionDeclarations`, calls as whole `functionCall` parts,
 * results sent back as `functionResponse` parts (`{output: text}`) under the tool's name.
 */
export async function runGeminiAgent(options: AgentOptions): Promise<AgentRun> {
  const { GoogleGenAI } = await load<typeof import('@google/genai')>('@google/genai');
  const ai = new GoogleGenAI({ apiKey: 'gemini-demo-not-a-real-key', httpOptions: { baseUrl: options.baseUrl } });
  const config = { tools: [{ functionDeclarations: options.toolbox.tools.map((t) => ({ name: t.name, description: t.description ?? '', parametersJsonSchema: t.inputSchema })) }] };
  const contents: import('@google/genai').Content[] = [{ role: 'user', parts: [{ text: options.prompt }] }];
  const run: AgentRun = { answer: '', toolCalls: [], llmCalls: 0 };
  for (let round = 0; round < (options.maxRounds ?? 5); round++) {
    const parts: import('@google/genai').Part[] = [];
    if (options.stream) {
      for await (const chunk of await ai.models.generateContentStream({ model: options.model, contents, config })) parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
    } else {
      parts.push(...((await ai.models.generateContent({ model: options.model, contents, config })).candidates?.[0]?.content?.parts ?? []));
    }
    run.llmCalls++;
    contents.push({ role: 'model', parts });
    const calls = parts.flatMap((p) => (p.functionCall ? [p.functionCall] : []));
    if (calls.length === 0) {
      run.answer = parts.map((p) => (p.thought ? '' : (p.text ?? ''))).join('');
      return run;
    }
    const responses: import('@google/genai').Part[] = [];
    for (const call of calls) {
      const name = call.name ?? '';
      const args = call.args ?? {};
      const result = await options.toolbox.call(name, args);
      run.toolCalls.push({ name, arguments: args, result });
      responses.push({ functionResponse: { name, ...(call.id !== undefined ? { id: call.id } : {}), response: { output: result } } });
    }
    contents.push({ role: 'user', parts: responses });
  }
  return run;
}

type OpenAiClient = InstanceType<typeof import('openai').default>;
type OpenAiMessage = import('openai').OpenAI.Chat.ChatCompletionMessage;

/** A streamed completion put back together: text deltas joined, tool-call fragments joined per `index`. */
async function streamOpenAi(openai: OpenAiClient, body: Omit<import('openai').OpenAI.Chat.ChatCompletionCreateParamsStreaming, 'stream'>): Promise<OpenAiMessage | undefined> {
  const message: OpenAiMessage = { role: 'assistant', content: '', refusal: null };
  const calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];
  for await (const chunk of await openai.chat.completions.create({ ...body, stream: true })) {
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    if (delta.content) message.content += delta.content;
    for (const piece of delta.tool_calls ?? []) {
      const call = (calls[piece.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.function.name += piece.function.name;
      if (piece.function?.arguments) call.function.arguments += piece.function.arguments;
    }
  }
  if (calls.length > 0) message.tool_calls = calls.filter(Boolean);
  return message;
}

/**
 * Clients mcptap does not install with itself (they are large, and @google/genai declares Node 22 and runs an
 * install script): `--client anthropic|gemini` uses them when they are installed next to mcptap.
 */
const NOT_INSTALLED: Record<string, string> = { '@anthropic-ai/sdk': 'anthropic', '@google/genai': 'gemini' };

/** Import a package the demo needs, or say plainly how to get it. */
export async function load<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    const client = NOT_INSTALLED[name];
    if (client !== undefined) {
      throw new McptapError('DEMO_DEPENDENCY', `--client ${client} needs the ${name} package, which mcptap does not install with itself: install it next to mcptap (npm install ${name}, or npx -p mcptap -p ${name} mcptap demo --client ${client}), or use --client ollama or openai, which come with mcptap.`, { cause: error });
    }
    throw new McptapError('DEMO_DEPENDENCY', `the demo could not load ${name}, which is installed with mcptap (${(error as Error).message}). Reinstall mcptap (npm install mcptap) and try again.`, { cause: error });
  }
}
