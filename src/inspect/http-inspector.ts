/**
 * What the HTTP tap does with its copy of the traffic: carries out the calls of http-calls.ts on an
 * HttpObserver (exchanges, MCP sessions, LLM turns) and WebSocket sessions, and writes every record to the log.
 * It runs behind the channel (channel.ts): on the inspection thread, or inline when a caller needs the records
 * on the main thread (`onRecord`).
 */
import { LogWriter } from '../log/writer.js';
import { logWriterOptions } from './inspector-log.js';
import type { HttpOutcome, RecordDraft, RecordSink } from '../log/schema.js';
import { HttpObserver, type HttpExchange } from '../session/http-exchange.js';
import { WebSocketSession } from '../session/ws-session.js';
import { teeSink, type RecordObserver } from '../export/tee-sink.js';
import type { RequestHead } from '../protocols/detect.js';
import { HTTP_CALL, type ErrorSummary, type HttpCall, type HttpInspectorConfig } from '../capture/http-calls.js';
import { stoppedMessage, type Inspector } from './channel.js';
import { LEVEL } from '../log/schema.js';

export interface HttpInspectorHooks {
  /** mcptap's own notices (a log that cannot be written, an internal error); a line on stderr. */
  notice: (message: string) => void;
  /** Called with every record after it is logged, stamped as in the log. */
  onRecord?: RecordObserver;
}

/** The channel builds the inspector with this, on its thread or inline (channel.ts, channel-thread.ts). */
export function createInspector(config: HttpInspectorConfig, hooks: HttpInspectorHooks): HttpInspector {
  return new HttpInspector(config, hooks);
}

export class HttpInspector implements Inspector {
  private readonly writer: LogWriter;
  private readonly observer: HttpObserver;
  private readonly exchanges = new Map<number, HttpExchange>();
  private readonly sockets = new Map<number, WebSocketSession>();
  private loggingFailed = false;

  constructor(
    config: HttpInspectorConfig,
    private readonly hooks: HttpInspectorHooks,
  ) {
    this.writer = new LogWriter(logWriterOptions(config, 'http', hooks.notice));
    const sink: RecordSink = hooks.onRecord ? teeSink(this.writer, { session: config.session, channel: 'http', label: config.label }, hooks.onRecord) : this.writer;
    this.observer = new HttpObserver({
      sink,
      session: config.session,
      maxBody: config.maxBody,
      chunks: config.chunks,
      targetPath: config.targetPath,
      redactor: this.writer.redactor ?? false,
    });
  }

  /** Carry out one call. Never throws: a failure in the logging path is said once and the rest goes on. */
  apply(call: unknown[]): void {
    try {
      this.dispatch(call);
    } catch (error) {
      if (this.loggingFailed) return;
      this.loggingFailed = true;
      this.hooks.notice(`an internal error in the logging path (${(error as Error).message}); the traffic is not affected. Please report it.`);
    }
  }

  abandoned(chunks: number, bytes: number): void {
    const msg = stoppedMessage(chunks, bytes);
    this.hooks.notice(msg);
    this.apply([HTTP_CALL.record, { time: Date.now(), kind: 'lifecycle', event: 'warning', level: LEVEL.warn, msg }]);
  }

  /** The close call: let decoders finish, end every session, write the close record last, close the log. */
  async close(call: unknown[]): Promise<void> {
    // Compressed bodies finish decoding asynchronously: give the last chunks' decoders a moment.
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    await this.observer.idle(2000);
    this.apply([HTTP_CALL.close, ...call.slice(1)]);
    this.writer.flushSync();
    await this.writer.close();
  }

  private dispatch(call: HttpCall): void {
    const x = call[1] as number;
    switch (call[0]) {
      case HTTP_CALL.begin:
        this.exchanges.set(x, this.observer.begin(call[2] as RequestHead, call[3] as number, call[4] as number));
        return;
      case HTTP_CALL.requestData:
        this.exchanges.get(x)?.requestData(call[2] as Buffer);
        return;
      case HTTP_CALL.requestEnd:
        this.exchanges.get(x)?.requestEnd(call[2] as number, call[3] as number, call[4] as Record<string, string> | undefined);
        return;
      case HTTP_CALL.responseHead:
        this.exchanges.get(x)?.responseHead(call[2] as number, call[3] as Record<string, string | string[] | undefined>, call[4] as number, call[5] as number);
        return;
      case HTTP_CALL.responseData:
        this.exchanges.get(x)?.responseData(call[2] as Buffer, call[3] as number, call[4] as number);
        return;
      case HTTP_CALL.responseEnd:
        this.exchanges.get(x)?.responseEnd(call[2] as number, call[3] as number, call[4] as Record<string, string> | undefined);
        this.exchanges.delete(x);
        return;
      case HTTP_CALL.fail:
        this.exchanges.get(x)?.fail(call[2] as Exclude<HttpOutcome, 'complete'>, call[3] as ErrorSummary | undefined, call[4] as number, call[5] as number);
        this.exchanges.delete(x);
        return;
      case HTTP_CALL.skipped: {
        const socket = this.sockets.get(x);
        if (socket) socket.skipped(call[4] as number);
        else this.exchanges.get(x)?.skipped(call[2] as 'c2s' | 's2c', call[3] as number, call[4] as number);
        return;
      }
      case HTTP_CALL.wsOpen: {
        const exchange = this.exchanges.get(x);
        if (!exchange) return;
        const headers = call[2] as Record<string, string | string[] | undefined>;
        exchange.responseHead(101, headers, call[3] as number, call[4] as number);
        exchange.fail('upgraded', undefined, call[3] as number, call[4] as number);
        this.exchanges.delete(x);
        this.sockets.set(x, new WebSocketSession(this.observer, exchange.id, headers['sec-websocket-extensions']));
        return;
      }
      case HTTP_CALL.wsDataC2S:
      case HTTP_CALL.wsDataS2C:
        this.sockets.get(x)?.data(call[0] === HTTP_CALL.wsDataC2S ? 'c2s' : 's2c', call[2] as Buffer, call[3] as number, call[4] as number);
        return;
      case HTTP_CALL.wsEnd:
        this.sockets.get(x)?.end(call[2] as number, call[3] as number);
        this.sockets.delete(x);
        return;
      case HTTP_CALL.record:
        this.writer.write(call[1] as RecordDraft);
        return;
      case HTTP_CALL.close:
        this.observer.close(call[2] as number, call[3] as number);
        this.writer.write(call[1] as RecordDraft);
        return;
    }
  }
}
