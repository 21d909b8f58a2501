// Error texts of the NATS pieces, whose client packages are optional peers.

export const natsNeedsPackages = (usedBy: string, packageNames: string[]) =>
  `${usedBy} needs ${packageNames.map((name) => `"${name}"`).join(' and ')}, which ${packageNames.length > 1 ? 'are' : 'is'} not installed. ` +
  `Run "npm install ${packageNames.join(' ')}".`;
