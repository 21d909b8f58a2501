import { InMemoryOutboxStore } from '@nest-outbox/outbox/core';
import { describeOutboxStoreContract } from '@nest-outbox/outbox/testing';

// The README's example of checking a store: the library's in-memory store keeps the same promises as the SQL ones.
describeOutboxStoreContract({
  name: 'InMemoryOutboxStore',
  createStore: async () => {
    const store = new InMemoryOutboxStore();
    return { store, write: async (messages) => store.add(messages), close: async () => undefined };
  },
});
