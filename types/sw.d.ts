// For docs/sw.js only (types/tsconfig.sw.json).

// Filled in by the build (macros/service_worker.py): every file of the lesson by site path,
// with the digest of its bytes; the files an install keeps; the digests' length in hex digits.
declare const __FILES__: Record<string, string>;
declare const __INSTALL__: string[];
declare const __DIGEST_HEX_CHARS__: number;

// sw.js is a classic script run as a service worker, so its `self` is a
// ServiceWorkerGlobalScope; TypeScript's worker library types a script's `self` as the plain
// WorkerGlobalScope, and says otherwise only of a module. These are the members sw.js uses.
interface WorkerGlobalScope {
  readonly clients: Clients;
  readonly registration: ServiceWorkerRegistration;
  skipWaiting(): Promise<void>;
}

interface WorkerGlobalScopeEventMap {
  activate: ExtendableEvent;
  fetch: FetchEvent;
  install: ExtendableEvent;
  message: ExtendableMessageEvent;
}

/** The Network Information API's data saver (Chromium only, hence optional). */
interface WorkerNavigator {
  readonly connection?: { readonly saveData?: boolean };
}
