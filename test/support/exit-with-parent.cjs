// Preloaded into forked app instances (fork(file, { execArgv: ['-r', this] })): an instance never
// outlives the test that started it, even when jest itself is killed before its afterAll runs.
process.on('disconnect', () => process.exit(3));
