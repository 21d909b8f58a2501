// Preloaded into forked app instances (fork(file, { execArgv: ['-r', this] })): holds the instance's
// first DataSource.initialize() until its parent says `{ t: 'go' }`, after telling it
// `{ t: 'at-start-line', at }`. Each child first transpiles the app's TypeScript, which takes each a
// different 0.5-3 s on a busy machine and spreads their starts wider than their migrations take;
// built instances of a rolling deployment start within milliseconds of each other. The parent
// releases them together once all have arrived, so their database work begins at the same moment.
const { DataSource } = require('typeorm');

const initialize = DataSource.prototype.initialize;
let go;
DataSource.prototype.initialize = async function (...args) {
  go ??= new Promise((resolve) => {
    const onMessage = (message) => {
      if (message?.t !== 'go') return;
      process.off('message', onMessage);
      resolve();
    };
    process.on('message', onMessage);
    process.send?.({ t: 'at-start-line', at: Date.now() });
  });
  await go;
  return initialize.apply(this, args);
};
