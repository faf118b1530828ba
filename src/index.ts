/**
 * mcptap's public API, for programs and tests. The CLI is a thin layer over these; nothing here reads argv or
 * exits the process.
 */
export type { Channel, LlmChannel, Direction, Frame, Message, JsonRpcId, JsonRpcErrorObject } from './types.js';
export { McptapError } from './types.js';
export { MCPTAP_VERSION } from './version.js';

export { startStdioTap, exitCodeOf, DEFAULT_MAX_BODY, DEFAULT_KILL_GRACE_MS } from './capture/stdio.js';
export type { StdioTap, StdioTapOptions, StdioTapExit } from './capture/stdio.js';

export { LineFramer } from './framing/lines.js';
export { decodeJsonRpc, classifyJsonRpc } from './protocols/jsonrpc.js';
export { McpSession } from './session/mcp-session.js';
export { Correlator } from './session/correlator.js';

export { LOG_FORMAT_VERSION } from './log/schema.js';
export type { LogRecord, RecordDraft, RecordSink, RecordKind, EvictedRecord, PendingRecord } from './log/schema.js';
export { pendingOfEvicted } from './log/evicted.js';
export { LogWriter } from './log/writer.js';
export { resolveLogDir, logFileName, labelFromCommand } from './log/location.js';
export { readLogs, readAllRecords, readLogFile, listLogFiles, parseRecordLine, holdsLlmCalls } from './log/reader.js';
export { ChunkBodies } from './log/chunk-bodies.js';
export { Spool } from './log/spool.js';
export type { SourcedRecord, LogProblem } from './log/reader.js';

export { formatPretty } from './trace/pretty.js';

export { startHttpTap, DEFAULT_HTTP_MAX_BODY } from './capture/http.js';
export { parseListenAddress, parseTarget } from './addresses.js';
export type { HttpTap, HttpTapOptions } from './capture/http.js';
export { HttpObserver, HttpExchange } from './session/http-exchange.js';
export { LlmTurn } from './session/llm-turn.js';
export { SseFramer } from './framing/sse.js';
export type { SseItem, SseEvent, SseComment } from './framing/sse.js';
export { BodyCapture, createBodyDecoder, contentCoding } from './framing/body.js';
export { OllamaReplyAssembler, summarizeOllamaRequest, ollamaUsage } from './protocols/ollama.js';
export { OpenAiReplyAssembler, summarizeOpenAiRequest, openAiReplyFromBody } from './protocols/openai.js';
export { AnthropicReplyAssembler, summarizeAnthropicRequest, anthropicReplyFromBody, anthropicUsage } from './protocols/anthropic.js';
export { GeminiReplyAssembler, summarizeGeminiRequest, geminiReplyFromBody, geminiUsage } from './protocols/gemini.js';
export type { LlmReply, LlmRequestSummary } from './protocols/llm.js';
export { redactHeaders } from './log/redact.js';
export { linkTrace, traceLines, parseTextToolCalls, DEFAULT_LINK_WINDOW_MS } from './trace/link.js';
export type { Trace, ToolRoundTrip, TraceTurn, TraceSession, TraceDiagnostic, DiagnosticCode, RoundTiming, LinkOptions } from './trace/link.js';
export { TraceLinker, DEFAULT_LINK_HORIZON_MS } from './trace/linker.js';
export type { TraceSink, LinkEnd } from './trace/linker.js';
export { writePrettyView, writeJsonView } from './trace/write-view.js';
export { buildTimeline, formatTimeline } from './trace/timeline.js';
export type { Timeline, TimelineStep, Participant } from './trace/timeline.js';
export { formatMermaid } from './trace/mermaid.js';
export { formatHtml, renderSequenceSvg } from './trace/html.js';
export { formatTraceJson } from './trace/json.js';
export { formatRoundTripSummary } from './trace/summary.js';
export { runDemo } from './demo/run.js';
export type { DemoOptions, DemoResult, DemoClient } from './demo/run.js';
export { runOllamaAgent, runOpenAiAgent, toolboxFrom } from './demo/agent.js';
export type { Toolbox, McpTool, McpToolClient, AgentOptions, AgentRun } from './demo/agent.js';

export { replay } from './replay/replay.js';
export type { ReplayOptions, ReplayHandle } from './replay/replay.js';
export { startStdioReplay } from './replay/stdio-server.js';
export type { StdioReplay, StdioReplayOptions } from './replay/stdio-server.js';
export { startHttpReplay, parseListen } from './replay/http-server.js';
export type { HttpReplay, HttpReplayOptions } from './replay/http-server.js';
export { McpReplayEngine, buildScript, mcpSessions } from './replay/mcp-engine.js';
export { MATCH_MODES, canonicalJson, canonicalParams, canonicalBody } from './replay/match.js';
export type { MatchMode } from './replay/match.js';
export { checkRecords, checkStream, Checker, formatCheckSummary, formatJunit, parseSignals, CHECK_SIGNALS, DEFAULT_FAIL_ON } from './check/check.js';
export type { CheckSignal, CheckReport, Finding, FoldedSessions, SessionSummary } from './check/check.js';
export { diffRecords, diffStreams, formatDiff, hasDifferences } from './check/diff.js';
export type { DiffReport, DiffOptions, ToolChange, OutcomeChange, LatencyRegression } from './check/diff.js';

export { buildHar, formatHar, writeHar, HarBuilder } from './export/har.js';
export type { Har, HarEntry } from './export/har.js';
export { buildSpans, SpanBuilder, parseTraceparent, mcpSpanId, llmSpanId } from './export/otlp-spans.js';
export type { SpanData } from './export/otlp-spans.js';
export { formatOtlp, writeOtlp, serializeOtlpJson, toReadableSpans } from './export/otlp.js';
export { SpanStream, streamSpans, SPAN_BATCH } from './export/otlp-stream.js';
export { startLiveSpanExporter, sendSpans, openSpanSender, otlpTracesUrl } from './export/otlp-live.js';
export type { LiveSpanExporter, LiveSpanExporterOptions, LiveSpanStats, SpanSender } from './export/otlp-live.js';
export { teeSink } from './export/tee-sink.js';
export type { RecordObserver, RecordStamp } from './export/tee-sink.js';
export { startUiServer, DEFAULT_UI_POLL_MS, DEFAULT_UI_MAX_RECORDS, DEFAULT_UI_MAX_BYTES } from './ui/server.js';
export type { UiServer, UiServerOptions } from './ui/server.js';
export { LogTail } from './ui/tail.js';
