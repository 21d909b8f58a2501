/** Texts of `nest-outbox schemas`, each saying what to pass. */

export const SCHEMAS_USAGE = `  schemas check --app <file> [--register]
                              checks each event schema (Schema Registry, docs/schema-registry.md)
                              against its subject's latest version and compatibility level, as
                              the module does at startup; exit 1 when one is incompatible.
                              --register then registers the new and changed ones; <file> as for
                              asyncapi (the registry is the one the app's options name)`;

export const unknownSchemasCommand = (sub: string | undefined) =>
  `schemas ${sub ?? ''}: unknown subcommand. Use "nest-outbox schemas check --app <file> [--register]".`.replace('schemas :', 'schemas:');

export const noSchemaRegistry = (path: string) =>
  `schemas check --app "${path}": no OutboxModule of the app has the "schemaRegistry" option, so there is nothing to check. ` +
  'Pass the root module whose OutboxModule.forRoot({ schemaRegistry }) names the registry.';
