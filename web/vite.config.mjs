// The panel's web page. `vite build web` (npm run build:web) writes web/dist, which the panel serves at `/`.
// `vite web` runs a dev server that forwards the API to a panel on PANEL_URL (default http://localhost:8080).
import { defineConfig } from 'vite';

const panel = process.env.PANEL_URL ?? 'http://localhost:8080';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 200,
  },
  server: {
    proxy: {
      '/graphql': { target: panel, ws: true, changeOrigin: false },
      '/api': { target: panel, changeOrigin: false },
      '/health': { target: panel },
    },
  },
});
