/**
 * `mcptap demo` (and `npm run demo`): the agent ↔ LLM ↔ MCP round trip on an embedded default, offline. A thin
 * layer over runDemo: flags in, the report out.
 */
import { DEMO_CLIENTS, runDemo, type DemoClient } from '../demo/run.js';
import { McptapError } from '../types.js';
import { fail, wantColor, type RegisterCommand } from './shared.js';

export const registerDemo: RegisterCommand = (cli) =>
  cli.command(
    'demo',
    'Run the classic agent loop offline (weather MCP server + recorded LLM) through mcptap and show the linked round trip',
    (y) =>
      y
        .option('client', { choices: DEMO_CLIENTS, default: 'ollama' as DemoClient, describe: 'Which npm LLM client the agent uses (anthropic names the tools as Claude Code does)' })
        .option('log-dir', { type: 'string', describe: 'Folder for the demo logs (default: a fresh logs/demo-<time> folder)' })
        .option('prompt', { type: 'string', describe: 'The user question (the recorded model answers the same way whatever you ask)' })
        .option('speed', { type: 'number', default: 20, describe: 'Replay speed of the recorded model: 1 = the recorded timing, 20 = twenty times faster, 0 = no pauses' })
        .option('llm', { type: 'string', describe: 'Use this LLM API instead of the recorded one, e.g. http://127.0.0.1:11434 (a local Ollama)' })
        .option('model', { type: 'string', describe: 'Model to ask (default: the recorded model)' })
        .option('color', { type: 'boolean', describe: 'Colour the output (default: when stdout is a terminal)' })
        .example('$0 demo', 'Ollama client, weather server, one round trip')
        .example('$0 demo --client openai --speed 1', 'The OpenAI client, at the recorded model speed')
        .example('$0 demo --client anthropic', 'The @anthropic-ai/sdk client, tools named mcp__weather__get_weather as in Claude Code'),
    async (argv) => {
      try {
        const speed = argv.speed as number;
        if (!Number.isFinite(speed) || speed < 0) throw new McptapError('BAD_FLAG', `--speed must be a number, 0 or more (0 plays the recording without pauses), not ${String(argv.speed)}.`);
        const color = wantColor(argv.color as boolean | undefined);
        const result = await runDemo({
          client: argv.client as DemoClient,
          speed,
          color,
          ...(typeof argv['log-dir'] === 'string' ? { logDir: argv['log-dir'] } : {}),
          ...(typeof argv.prompt === 'string' ? { prompt: argv.prompt } : {}),
          ...(typeof argv.llm === 'string' ? { llmUrl: argv.llm } : {}),
          ...(typeof argv.model === 'string' ? { model: argv.model } : {}),
          progress: (line) => process.stderr.write(`${line}\n`),
        });
        process.stdout.write(`${result.lines.join('\n')}\n`);
      } catch (error) {
        fail(error);
      }
    },
  );
