// A training or an inference application instrumented with the OpenTelemetry JS SDK, pushing
// its KPIs to gpuscope's OTLP/HTTP receiver (tests/integration/test_otlp_apps.py).
//
//   MODE=training   step durations of training.step.duration (s) and training.samples: each step
//                   takes BASE_STEP_S x (the GPUs' maximum SM clock / their current SM clock), the
//                   clock read from gpuscope's /metrics (METRICS_URL, GPUS), so the steps stretch
//                   when the simulator throttles those GPUs.
//   MODE=inference  gen_ai.server.request.duration uniform on [0, 1) s (p99 = 0.99 s) and
//                   gen_ai.server.time_to_first_token uniform on [0, 0.2) s, from a fixed sequence.
// Environment: OTLP_URL (.../v1/metrics), PROTOCOL proto|json, RESOURCE (JSON of resource
// attributes), EXPORT_MS, RATE (measurements per second). Prints "exported N" after each export.
'use strict';
const { MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const http = require('http');

const env = process.env;
const protocol = env.PROTOCOL || 'proto';
const { OTLPMetricExporter } = protocol === 'json'
  ? require('@opentelemetry/exporter-metrics-otlp-http')
  : require('@opentelemetry/exporter-metrics-otlp-proto');

const exporter = new OTLPMetricExporter({ url: env.OTLP_URL });
let exportCount = 0;
const exportOnce = exporter.export.bind(exporter);
exporter.export = (metrics, done) => exportOnce(metrics, (result) => {
  exportCount += 1;
  console.log(`exported ${exportCount} code=${result.code}${result.error ? ' ' + result.error : ''}`);
  done(result);
});
const reader = new PeriodicExportingMetricReader({
  exporter, exportIntervalMillis: Number(env.EXPORT_MS || 1000),
});
const provider = new MeterProvider({
  resource: resourceFromAttributes(JSON.parse(env.RESOURCE || '{}')), readers: [reader],
});
const meter = provider.getMeter('gpuscope-otel-app');
const rate = Number(env.RATE || 50);
const durations = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.5, 2];

function smClocks(callback) {
  http.get(env.METRICS_URL, (res) => {
    let text = '';
    res.on('data', (chunk) => { text += chunk; });
    res.on('end', () => {
      const clocks = [];
      for (const gpu of (env.GPUS || '0').split(',')) {
        const m = text.match(new RegExp(`^DCGM_FI_DEV_SM_CLOCK\\{gpu="${gpu}",[^}]*\\} (\\S+)`, 'm'));
        if (m) clocks.push(Number(m[1]));
      }
      callback(clocks);
    });
  }).on('error', () => callback([]));
}

function training() {
  const steps = meter.createHistogram('training.step.duration', {
    unit: 's', advice: { explicitBucketBoundaries: durations },
  });
  const samples = meter.createCounter('training.samples');
  const base = Number(env.BASE_STEP_S || 0.2);
  let fastest = 0;
  let slowdown = 1;
  setInterval(() => smClocks((clocks) => {
    if (clocks.length === 0) return;
    const clock = Math.min(...clocks);
    fastest = Math.max(fastest, clock);
    slowdown = clock > 0 ? fastest / clock : slowdown;
  }), 250);
  let i = 0;
  setInterval(() => {
    i += 1;
    steps.record(base * slowdown * (1 + 0.02 * Math.sin(i)));
    samples.add(32);
  }, 1000 / rate);
}

function inference() {
  const requests = meter.createHistogram('gen_ai.server.request.duration', {
    unit: 's', advice: { explicitBucketBoundaries: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1] },
  });
  const ttft = meter.createHistogram('gen_ai.server.time_to_first_token', {
    unit: 's', advice: { explicitBucketBoundaries: [0.025, 0.05, 0.1, 0.2] },
  });
  let i = 0;
  setInterval(() => {
    i += 1;
    const u = (i * 0.6180339887498949) % 1;  // equidistributed on [0, 1)
    requests.record(u, { 'gen_ai.request.model': 'llama' });
    ttft.record(0.2 * u, { 'gen_ai.request.model': 'llama' });
  }, 1000 / rate);
}

(env.MODE === 'inference' ? inference : training)();
process.on('SIGTERM', () => provider.shutdown().finally(() => process.exit(0)));
