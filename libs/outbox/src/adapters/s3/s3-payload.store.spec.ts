describe('the S3 claim-check store without @aws-sdk/client-s3', () => {
  afterEach(() => jest.resetModules());

  it('fails when it is made, naming the package and the option', () => {
    jest.doMock('@aws-sdk/client-s3', () => {
      throw Object.assign(new Error("Cannot find module '@aws-sdk/client-s3'"), { code: 'MODULE_NOT_FOUND' });
    });
    // Loaded after the mock, as an app that never installed the package would load it.
    const { S3PayloadReader } = jest.requireActual<typeof import('./s3-payload.store')>('./s3-payload.store');
    const { OutboxConfigurationError: ConfigurationError } = jest.requireActual<typeof import('../../core/outbox.errors')>('../../core/outbox.errors');
    const make = () => new S3PayloadReader({ bucket: 'payloads', prefix: '' });
    expect(make).toThrow(ConfigurationError);
    expect(make).toThrow(/option "claimCheck.store" needs the package "@aws-sdk\/client-s3", which is not installed\. Run "npm install @aws-sdk\/client-s3", or set "claimCheck.store" to 'database'/);
  });

});
