import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const webDir = fileURLToPath(new URL('.', import.meta.url));

/**
 * The web UI: `vite build --config web/vite.config.ts` (from packages/stega) writes it to
 * packages/stega/dist/web, which Fastify serves (src/http/ui.ts). `vite --config ...` runs a
 * dev server that forwards /api to a Stega on localhost:3000.
 */
export default defineConfig({
  root: webDir,
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    // no inline <script> or data: module: the CSP allows scripts from 'self' only
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: {
    proxy: { '/api': 'http://localhost:3000', '/healthz': 'http://localhost:3000' },
  },
});
