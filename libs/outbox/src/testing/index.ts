// @nest-outbox/outbox/testing: OutboxTestingModule in place of OutboxModule, a recording transport,
// assertions, and the contract suites a store or transport of your own can run.
export { OutboxTestingModule } from './outbox-testing.module';
export { InMemoryOutbox } from './in-memory-outbox';
export { RecordingOutboxTransport } from './recording-outbox.transport';
export { expectPublished, expectNotPublished, findPublished, type PublishedMatch } from './outbox-assertions';
export { getRecordedEvents, type RecordedEvent } from '../core/recorded-events';
export { describeOutboxStoreContract, type OutboxStoreContractSubject, type StoreUnderTest } from './contracts/outbox-store-contract.suite';
export {
  describeOutboxTransportContract,
  type OutboxTransportContractSubject,
  type OpenTransport,
  type BrokerDestination,
  type ReceivedMessage,
} from './contracts/outbox-transport-contract.suite';
export type { ContractRunner, ContractTest } from './contracts/contract-runner';
