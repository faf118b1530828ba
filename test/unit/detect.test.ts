import { describe, expect, it } from 'vitest';
import {
  acceptsEventStream,
  channelFromHead,
  isJsonRpcBody,
  isLlmTurnPath,
  mediaType,
  pathOnly,
  resolveEndpoint,
} from '../../src/protocols/detect.js';
import { parseListenAddress, parseTarget } from '../../src/addresses.js';

const head = (method: string, path: string, headers: Record<string, string> = {}) => ({ method, path, headers });

describe('channel detection', () => {
  it('knows the Ollama and OpenAI paths', () => {
    expect(channelFromHead(head('POST', '/api/chat'))).toBe('ollama');
    expect(channelFromHead(head('GET', '/api/tags'))).toBe('ollama');
    expect(channelFromHead(head('POST', '/v1/chat/completions'))).toBe('openai');
    expect(channelFromHead(head('POST', '/v1/responses'))).toBe('openai');
    expect(channelFromHead(head('GET', '/v1/models'))).toBe('openai');
    expect(isLlmTurnPath('ollama', '/api/chat')).toBe(true);
    expect(isLlmTurnPath('ollama', '/api/tags')).toBe(false);
    expect(isLlmTurnPath('openai', '/v1/chat/completions?x=1')).toBe(true);
  });

  it('knows MCP Streamable HTTP by its session or protocol-version header', () => {
    expect(channelFromHead(head('GET', '/mcp', { 'mcp-session-id': 'abc' }))).toBe('mcp-http');
    expect(channelFromHead(head('POST', '/mcp', { 'mcp-protocol-version': '2025-11-25' }))).toBe('mcp-http');
    // Without either, only the body can tell.
    expect(channelFromHead(head('POST', '/mcp'))).toBeUndefined();
  });

  it('recognizes JSON-RPC bodies, single or batched, even cut at the cap', () => {
    expect(isJsonRpcBody('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}')).toBe(true);
    expect(isJsonRpcBody('[{"jsonrpc":"2.0","method":"notifications/initialized"}]')).toBe(true);
    expect(isJsonRpcBody('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"x":"aaaa')).toBe(true);
    expect(isJsonRpcBody('{"model":"qwen2.5:3b","messages":[]}')).toBe(false);
    expect(isJsonRpcBody('hello')).toBe(false);
    expect(isJsonRpcBody('')).toBe(false);
  });

  it('reads Accept and Content-Type', () => {
    expect(acceptsEventStream({ accept: 'application/json, text/event-stream' })).toBe(true);
    expect(acceptsEventStream({ accept: 'application/json' })).toBe(false);
    expect(mediaType('Text/Event-Stream; charset=utf-8')).toBe('text/event-stream');
    expect(mediaType(undefined)).toBe('');
    expect(pathOnly('/message?sessionId=1')).toBe('/message');
  });

  it('resolves a legacy endpoint URI against the stream it came on', () => {
    expect(resolveEndpoint('/message?sessionId=abc', '/sse')).toBe('/message?sessionId=abc');
    expect(resolveEndpoint('messages/?session_id=abc', '/mcp/sse')).toBe('/mcp/messages/?session_id=abc');
    expect(resolveEndpoint('http://127.0.0.1:8000/messages/?session_id=x', '/sse')).toBe('/messages/?session_id=x');
  });
});

describe('--listen and --target', () => {
  it('binds 127.0.0.1 when given a port alone', () => {
    expect(parseListenAddress(11434)).toEqual({ host: '127.0.0.1', port: 11434 });
    expect(parseListenAddress('11434')).toEqual({ host: '127.0.0.1', port: 11434 });
    expect(parseListenAddress(':8080')).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(parseListenAddress('0.0.0.0:8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(parseListenAddress('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(parseListenAddress(undefined)).toEqual({ host: '127.0.0.1', port: 0 });
  });

  it('says what is wrong with a bad address or target', () => {
    expect(() => parseListenAddress('localhost')).toThrow(/--listen must be a port or HOST:PORT/);
    expect(() => parseListenAddress('70000')).toThrow(/between 0 and 65535/);
    expect(() => parseTarget('ftp://x')).toThrow(/http:\/\/ or https:\/\//);
    expect(parseTarget('127.0.0.1:11435').toString()).toBe('http://127.0.0.1:11435/');
    expect(parseTarget('https://api.openai.com/v1').pathname).toBe('/v1');
  });
});
