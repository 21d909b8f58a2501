// Error texts of the TypeORM adapter when TypeORM is not installed (it is an optional peer).

/** What to install, with the way out that needs no TypeORM. */
const installOrConnection = (packageNames: string[]) =>
  `Run "npm install ${packageNames.join(' ')}", or pass the "connection" option ({ url } or { pool }) to run without TypeORM (docs/data-layers.md).`;

export const typeOrmModeNotInstalled = (moduleName: string, packageNames: string[]) =>
  `${moduleName} without the "connection" option runs on a TypeORM data source, and ${quoted(packageNames)} ${packageNames.length > 1 ? 'are' : 'is'} not installed. ` +
  installOrConnection(packageNames);

export const typeOrmNotInstalled = (usedBy: string) =>
  `${usedBy} is part of the TypeORM adapter and needs the package "typeorm", which is not installed. ${installOrConnection(['typeorm'])}`;

function quoted(packageNames: string[]): string {
  return packageNames.map((name) => `"${name}"`).join(' and ');
}
