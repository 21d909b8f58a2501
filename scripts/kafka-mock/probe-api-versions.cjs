#!/usr/bin/env node
// Prints the Kafka APIs and version ranges a broker serves, from one ApiVersions v0 request
// (every broker answers v0). Usage: node scripts/kafka-mock/probe-api-versions.cjs HOST:PORT
'use strict';
const net = require('node:net');

const NAMES = {
  0: 'Produce', 1: 'Fetch', 2: 'ListOffsets', 3: 'Metadata', 8: 'OffsetCommit', 9: 'OffsetFetch', 10: 'FindCoordinator',
  11: 'JoinGroup', 12: 'Heartbeat', 13: 'LeaveGroup', 14: 'SyncGroup', 15: 'DescribeGroups', 16: 'ListGroups',
  17: 'SaslHandshake', 18: 'ApiVersions', 19: 'CreateTopics', 20: 'DeleteTopics', 22: 'InitProducerId',
  23: 'OffsetForLeaderEpoch', 24: 'AddPartitionsToTxn', 25: 'AddOffsetsToTxn', 26: 'EndTxn', 28: 'TxnOffsetCommit',
  32: 'DescribeConfigs', 36: 'SaslAuthenticate', 60: 'DescribeCluster', 68: 'ConsumerGroupHeartbeat',
  69: 'ConsumerGroupDescribe', 71: 'GetTelemetrySubscriptions', 72: 'PushTelemetry',
};

const address = process.argv[2];
const match = /^(.+):(\d+)$/.exec(address ?? '');
if (!match) {
  console.error('usage: node scripts/kafka-mock/probe-api-versions.cjs HOST:PORT');
  process.exit(2);
}
const clientId = Buffer.from('api-versions-probe');
// Request header v1: api key 18 (ApiVersions), version 0, correlation id 1, client id; v0 has no body.
const request = Buffer.alloc(4 + 10 + clientId.length);
request.writeInt32BE(10 + clientId.length, 0);
request.writeInt16BE(18, 4);
request.writeInt16BE(0, 6);
request.writeInt32BE(1, 8);
request.writeInt16BE(clientId.length, 12);
clientId.copy(request, 14);

const socket = net.connect(Number(match[2]), match[1], () => socket.write(request));
socket.setTimeout(5000, () => {
  console.error(`no ApiVersions response from ${address} within 5 s`);
  process.exit(1);
});
socket.on('error', (error) => {
  console.error(`${address}: ${error.message}`);
  process.exit(1);
});
let received = Buffer.alloc(0);
socket.on('data', (chunk) => {
  received = Buffer.concat([received, chunk]);
  if (received.length < 4 || received.length < 4 + received.readInt32BE(0)) return;
  // Response: size, correlation id, error code, [api key, min, max].
  const error = received.readInt16BE(8);
  const count = received.readInt32BE(10);
  for (let i = 0, at = 14; i < count; i++, at += 6) {
    const key = received.readInt16BE(at);
    console.log(`${String(key).padStart(3)} ${(NAMES[key] ?? '?').padEnd(26)} v${received.readInt16BE(at + 2)}-v${received.readInt16BE(at + 4)}`);
  }
  if (error !== 0) console.log(`error code ${error}`);
  socket.end();
});
