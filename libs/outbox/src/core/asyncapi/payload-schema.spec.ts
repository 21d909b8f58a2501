import { IsInt, IsString, Min } from 'class-validator';

class Shipped {
  @IsString()
  parcelId!: string;

  @IsInt()
  @Min(1)
  weightGrams!: number;
}

class Untyped {
  parcelId!: string;
}

describe('payloadSchemaOf', () => {
  afterEach(() => jest.resetModules());

  it('turns class-validator decorators into JSON Schema', () => {
    const { payloadSchemaOf } = require('./payload-schema') as typeof import('./payload-schema');
    expect(payloadSchemaOf(Shipped).schema).toMatchObject({
      type: 'object',
      properties: { parcelId: { type: 'string' }, weightGrams: { type: 'integer', minimum: 1 } },
      required: ['parcelId', 'weightGrams'],
    });
  });

  it('says a class without decorators has its fields undescribed', () => {
    const { payloadSchemaOf } = require('./payload-schema') as typeof import('./payload-schema');
    expect(payloadSchemaOf(Untyped).schema).toEqual({ type: 'object', description: expect.stringMatching(/^Untyped declares no class-validator decorator/) });
  });

  it('without class-validator-jsonschema, names the package to install rather than failing', () => {
    jest.doMock('class-validator-jsonschema', () => {
      throw Object.assign(new Error("Cannot find module 'class-validator-jsonschema'"), { code: 'MODULE_NOT_FOUND' });
    });
    const { payloadSchemaOf } = require('./payload-schema') as typeof import('./payload-schema');
    expect(payloadSchemaOf(Shipped).schema).toEqual({
      type: 'object',
      description: 'Shipped declares class-validator decorators; install "class-validator-jsonschema" (an optional peer) to have its fields described here.',
    });
  });
});
