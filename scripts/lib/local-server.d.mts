// Types for scripts/lib/local-server.mjs, for the tests that import it.
export declare const devServerPath: string;
export declare const DEFAULT_PORT: number;
export interface LocalPortOptions {
  env?: Record<string, string | undefined>;
  readRecord?: () => string;
  isRunning?: (pid: number) => boolean;
}
export declare function localPort(options?: LocalPortOptions): number;
export declare function localBaseUrl(options?: LocalPortOptions): string;
export declare function recordDevServer(port: number): void;
export declare function forgetDevServer(): void;
