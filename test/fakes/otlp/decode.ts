// Decoding of OTLP/HTTP trace export bodies for the fake receiver in ../otlp.ts: binary protobuf
// (messages in trace.proto, via protobufjs) and OTLP/JSON, both normalised to ReceivedSpan.
//
// OTLP/JSON follows the proto3 JSON mapping with the deviations of the OTLP specification
// ("JSON Protobuf Encoding", open-telemetry/opentelemetry-proto v1.11.0 docs/specification.md):
// trace and span ids are hex, enums integers only, unknown field names ignored; 64-bit integers
// are decimal strings or numbers. Ids must have their exact length and not be all zeroes, which
// the spec calls invalid; a real Collector may let some of those through, the fake does not.

import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import protobuf from "protobufjs";
import { z } from "zod";

/** An OTLP AnyValue: int64 as number, bytes as Uint8Array, an empty AnyValue (e.g. null in an array) as null. */
export type AttributeValue = string | number | boolean | Uint8Array | null | AttributeValue[] | { [key: string]: AttributeValue };
export type Attributes = Record<string, AttributeValue>;

export interface ReceivedSpan {
  /** 32 lowercase hex characters. */
  traceId: string;
  /** 16 lowercase hex characters. */
  spanId: string;
  /** null for a root span (empty bytes, or an absent/empty string in JSON). */
  parentSpanId: string | null;
  name: string;
  /** SpanKind as in the proto: 0 UNSPECIFIED, 1 INTERNAL, 2 SERVER, 3 CLIENT, 4 PRODUCER, 5 CONSUMER. */
  kind: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Attributes;
  events: Array<{ name: string; timeUnixNano: bigint; attributes: Attributes }>;
  links: Array<{ traceId: string; spanId: string; attributes: Attributes }>;
  /** code: 0 UNSET, 1 OK, 2 ERROR. */
  status: { code: number; message: string };
  resource: Attributes;
  scope: { name: string; version: string };
  /** How it arrived. */
  encoding: "protobuf" | "json";
}

export type Encoding = ReceivedSpan["encoding"];

export const PROTOBUF = "application/x-protobuf";
export const JSON_TYPE = "application/json";
/** The spec's recommended limit, before and after decompression. */
export const BODY_LIMIT = 64 * 1024 * 1024;

const proto = protobuf.loadSync(fileURLToPath(new URL("./trace.proto", import.meta.url)));
const messages = {
  request: proto.lookupType("opentelemetry.proto.subset.ExportTraceServiceRequest"),
  response: proto.lookupType("opentelemetry.proto.subset.ExportTraceServiceResponse"),
  rpcStatus: proto.lookupType("opentelemetry.proto.subset.RpcStatus"),
};

// The OTLP/JSON shape. Decoded protobuf is converted to the same shape (ids and bytes as base64,
// 64-bit integers as decimal strings) so both encodings share one validation and one normalisation.
interface WireAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number | string;
  arrayValue?: { values?: WireAnyValue[] };
  kvlistValue?: { values?: WireKeyValue[] };
  bytesValue?: string;
}
interface WireKeyValue {
  key?: string;
  value?: WireAnyValue;
}
// Numbers past 2^53 are allowed: JSON.parse has already rounded them, as any JS receiver would.
const integer = z.number().refine(Number.isInteger, "expected an integer");
const int64 = z.union([z.string().regex(/^-?\d+$/, "expected a decimal int64"), integer]);
const uint64 = z.union([z.string().regex(/^\d+$/, "expected a decimal uint64"), integer.refine((n) => n >= 0, "expected a uint64")]);
const ENUM_NAMES = "OTLP/JSON enum values must be integers";
const enumValue = (max: number) =>
  z
    .number({ error: (issue) => (issue.code === "invalid_type" ? ENUM_NAMES : undefined) })
    .int(ENUM_NAMES)
    .min(0, `expected an enum value from 0 to ${max}`)
    .max(max, `expected an enum value from 0 to ${max}`);
const keyValue: z.ZodType<WireKeyValue> = z.lazy(() => z.object({ key: z.string().optional(), value: anyValue.optional() }));
const anyValue: z.ZodType<WireAnyValue> = z.lazy(() =>
  z
    .object({
      stringValue: z.string().optional(),
      boolValue: z.boolean().optional(),
      intValue: int64.optional(),
      doubleValue: z.union([z.number(), z.enum(["NaN", "Infinity", "-Infinity"])]).optional(),
      arrayValue: z.object({ values: z.array(anyValue).optional() }).optional(),
      kvlistValue: z.object({ values: z.array(keyValue).optional() }).optional(),
      bytesValue: z.string().optional(),
    })
    .refine((v) => Object.keys(v).length <= 1, "AnyValue sets more than one field of its `value` oneof"),
);
const attributes = z.array(keyValue).optional();
const exportRequest = z.object({
  resourceSpans: z
    .array(
      z.object({
        resource: z.object({ attributes }).optional(),
        scopeSpans: z
          .array(
            z.object({
              scope: z.object({ name: z.string().optional(), version: z.string().optional() }).optional(),
              spans: z
                .array(
                  z.object({
                    traceId: z.string().optional(),
                    spanId: z.string().optional(),
                    parentSpanId: z.string().optional(),
                    name: z.string().optional(),
                    kind: enumValue(5).optional(),
                    startTimeUnixNano: uint64.optional(),
                    endTimeUnixNano: uint64.optional(),
                    attributes,
                    events: z.array(z.object({ timeUnixNano: uint64.optional(), name: z.string().optional(), attributes })).optional(),
                    links: z.array(z.object({ traceId: z.string().optional(), spanId: z.string().optional(), attributes })).optional(),
                    status: z.object({ message: z.string().optional(), code: enumValue(2).optional() }).optional(),
                  }),
                )
                .optional(),
            }),
          )
          .optional(),
      }),
    )
    .optional(),
});
type WireRequest = z.infer<typeof exportRequest>;

/** A permanent problem with the request's data: the spec's 400 Bad Request. */
export class BadData extends Error {}
/** A body over BODY_LIMIT, before or after decompression: the spec's 413. */
export class TooLarge extends Error {}

/** Reads an id field as lowercase hex: `hex` for OTLP/JSON, base64 for decoded protobuf. */
function idReader(encoding: "hex" | "base64") {
  return (value: string | undefined, bytes: number, where: string, optional = false): string | null => {
    if (encoding === "hex" && value && !/^[0-9a-fA-F]*$/.test(value)) throw new BadData(`${where}: "${value}" is not hex`);
    const hex = encoding === "hex" ? (value ?? "").toLowerCase() : Buffer.from(value ?? "", "base64").toString("hex");
    if (hex === "" && optional) return null;
    if (hex.length !== bytes * 2) throw new BadData(`${where}: expected ${bytes} bytes, got ${hex.length / 2}`);
    if (/^0+$/.test(hex)) throw new BadData(`${where}: an all-zero id is invalid`);
    return hex;
  };
}

function toValue(v: WireAnyValue | undefined): AttributeValue {
  if (v?.stringValue !== undefined) return v.stringValue;
  if (v?.boolValue !== undefined) return v.boolValue;
  if (v?.intValue !== undefined) return Number(v.intValue);
  if (v?.doubleValue !== undefined) return Number(v.doubleValue);
  if (v?.arrayValue) return (v.arrayValue.values ?? []).map(toValue);
  if (v?.kvlistValue) return toAttributes(v.kvlistValue.values);
  if (v?.bytesValue !== undefined) return new Uint8Array(Buffer.from(v.bytesValue, "base64"));
  return null;
}

function toAttributes(list: WireKeyValue[] | undefined): Attributes {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key ?? "", toValue(kv.value)]));
}

function toSpans(request: WireRequest, ids: ReturnType<typeof idReader>, encoding: Encoding): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  (request.resourceSpans ?? []).forEach((rs, i) => {
    const resource = toAttributes(rs.resource?.attributes);
    (rs.scopeSpans ?? []).forEach((ss, j) => {
      const scope = { name: ss.scope?.name ?? "", version: ss.scope?.version ?? "" };
      (ss.spans ?? []).forEach((s, k) => {
        const at = `resourceSpans[${i}].scopeSpans[${j}].spans[${k}]`;
        spans.push({
          traceId: ids(s.traceId, 16, `${at}.traceId`)!,
          spanId: ids(s.spanId, 8, `${at}.spanId`)!,
          parentSpanId: ids(s.parentSpanId, 8, `${at}.parentSpanId`, true),
          name: s.name ?? "",
          kind: s.kind ?? 0,
          startTimeUnixNano: BigInt(s.startTimeUnixNano ?? 0),
          endTimeUnixNano: BigInt(s.endTimeUnixNano ?? 0),
          attributes: toAttributes(s.attributes),
          events: (s.events ?? []).map((e) => ({ name: e.name ?? "", timeUnixNano: BigInt(e.timeUnixNano ?? 0), attributes: toAttributes(e.attributes) })),
          links: (s.links ?? []).map((l, n) => ({
            traceId: ids(l.traceId, 16, `${at}.links[${n}].traceId`)!,
            spanId: ids(l.spanId, 8, `${at}.links[${n}].spanId`)!,
            attributes: toAttributes(l.attributes),
          })),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
          resource,
          scope,
          encoding,
        });
      });
    });
  });
  return spans;
}

function validate(value: unknown): WireRequest {
  const result = exportRequest.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("");
  throw new BadData(`${path.slice(1) || "body"}: ${issue.message}`);
}

/** The spans of an ExportTraceServiceRequest; throws BadData when the body does not decode or is invalid. */
export function decodeExport(body: Buffer, encoding: Encoding): ReceivedSpan[] {
  if (encoding === "json") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch (err) {
      throw new BadData(`invalid OTLP/JSON: ${(err as Error).message}`);
    }
    return toSpans(validate(parsed), idReader("hex"), "json");
  }
  let message: protobuf.Message;
  try {
    message = messages.request.decode(body);
  } catch (err) {
    throw new BadData(`invalid protobuf ExportTraceServiceRequest: ${(err as Error).message}`);
  }
  const plain = messages.request.toObject(message, { longs: String, enums: Number, bytes: String });
  return toSpans(validate(plain), idReader("base64"), "protobuf");
}

/** The body without its Content-Encoding (identity or gzip); throws BadData or TooLarge. */
export function inflate(body: Buffer, contentEncoding: string): Buffer {
  if (contentEncoding === "identity") return body;
  if (contentEncoding !== "gzip") throw new BadData(`unsupported Content-Encoding "${contentEncoding}"; supported: gzip`);
  try {
    return gunzipSync(body, { maxOutputLength: BODY_LIMIT });
  } catch (err) {
    if (err instanceof RangeError) throw new TooLarge("the request body exceeds 64 MiB after gzip decompression");
    throw new BadData(`gzip: ${(err as Error).message}`);
  }
}

/** The body of a full success: an empty ExportTraceServiceResponse (partial_success unset, as the spec requires). */
export function successBody(encoding: Encoding): Buffer {
  return encoding === "json" ? Buffer.from("{}") : Buffer.from(messages.response.encode({}).finish());
}

/** The body of a 4xx: a google.rpc.Status with the gRPC code for the HTTP status, as the Collector maps them. */
export function rpcStatusBody(encoding: Encoding, httpStatus: 400 | 413, message: string): Buffer {
  const status = { code: httpStatus === 400 ? 3 /* INVALID_ARGUMENT */ : 8 /* RESOURCE_EXHAUSTED */, message };
  return encoding === "json" ? Buffer.from(JSON.stringify(status)) : Buffer.from(messages.rpcStatus.encode(status).finish());
}
