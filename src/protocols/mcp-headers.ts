/**
 * The HTTP headers a 2026-07-28 POST mirrors its body in: `Mcp-Method` (the JSON-RPC method), `Mcp-Name` (the
 * tool or prompt name, or the resource URI, the body names) and `MCP-Protocol-Version` (the `_meta` revision).
 * A server rejects a disagreement with -32020; mcptap says which header disagrees. Pure.
 */
import { asString, META } from './mcp.js';

/** The mirrored headers of one POST, as sent (absent when not sent). */
export interface McpHeaders {
  method?: string;
  name?: string;
  protocolVersion?: string;
}

/** One header that disagrees with the body. */
export interface HeaderMismatch {
  header: 'Mcp-Method' | 'Mcp-Name' | 'MCP-Protocol-Version';
  value: string;
  /** What the body says instead; absent when the body says nothing. */
  body?: string;
}

/** The mirrored headers of a request head, or undefined when it sends none of them. */
export function mcpHeadersOf(headers: Record<string, string | string[] | undefined>): McpHeaders | undefined {
  const method = first(headers['mcp-method']);
  const name = decodeFieldValue(first(headers['mcp-name']));
  const protocolVersion = first(headers['mcp-protocol-version']);
  if (method === undefined && name === undefined) return undefined;
  const out: McpHeaders = {};
  if (method !== undefined) out.method = method;
  if (name !== undefined) out.name = name;
  if (protocolVersion !== undefined) out.protocolVersion = protocolVersion;
  return out;
}

/** Which mirrored headers disagree with the request body. */
export function headerMismatches(
  headers: McpHeaders,
  method: string,
  params: Record<string, unknown> | undefined,
  meta: Record<string, unknown> | undefined,
): HeaderMismatch[] {
  const out: HeaderMismatch[] = [];
  if (headers.method !== undefined && headers.method !== method) out.push({ header: 'Mcp-Method', value: headers.method, body: method });
  if (headers.name !== undefined) {
    const named = asString(params?.name) ?? asString(params?.uri);
    if (named !== headers.name) out.push(withBody({ header: 'Mcp-Name', value: headers.name }, named));
  }
  const version = asString(meta?.[META.protocolVersion]);
  if (headers.protocolVersion !== undefined && version !== undefined && headers.protocolVersion !== version) {
    out.push({ header: 'MCP-Protocol-Version', value: headers.protocolVersion, body: version });
  }
  return out;
}

function withBody(mismatch: HeaderMismatch, body: string | undefined): HeaderMismatch {
  if (body !== undefined) mismatch.body = body;
  return mismatch;
}

/** A value outside plain ASCII is sent as `=?base64?<base64 of its UTF-8>?=`. */
function decodeFieldValue(value: string | undefined): string | undefined {
  if (value === undefined || !value.startsWith('=?base64?') || !value.endsWith('?=')) return value;
  return Buffer.from(value.slice(9, -2), 'base64').toString('utf8');
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
