import { create, createFileRegistry, type DescMessage } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';

// What protoc-gen-es would generate from this file, built here without protoc (none installs here):
//
//   syntax = "proto3";
//   package shop;
//   message PaymentTaken { string payment_id = 1; int64 amount_cents = 2; string currency = 3; }
//
// `fields` of the second version can be changed to make an incompatible one.
const TYPE_STRING = 9;
const TYPE_INT64 = 3;
const LABEL_OPTIONAL = 1;

export function paymentTakenDescriptor(fileName: string, amountType: number = TYPE_INT64): DescMessage {
  const file = create(FileDescriptorProtoSchema, {
    name: fileName,
    package: 'shop',
    syntax: 'proto3',
    messageType: [
      {
        name: 'PaymentTaken',
        field: [
          { name: 'payment_id', jsonName: 'paymentId', number: 1, type: TYPE_STRING, label: LABEL_OPTIONAL },
          { name: 'amount_cents', jsonName: 'amountCents', number: 2, type: amountType, label: LABEL_OPTIONAL },
          { name: 'currency', jsonName: 'currency', number: 3, type: TYPE_STRING, label: LABEL_OPTIONAL },
        ],
      },
    ],
  });
  return createFileRegistry(file, () => undefined).getMessage('shop.PaymentTaken')!;
}

export const PROTOBUF_STRING = TYPE_STRING;
