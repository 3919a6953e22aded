export function walk(dir: string): string[];
export function transpileTree(root: string, files: string[], outRoot: string, options?: { lua?: boolean }): void;
export function libSources(root: string): string[];
