import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

// The build lands in dist/, which console.go embeds (go:embed all:dist). Hashed file names under
// assets/ let the server cache them for a year; index.html is revalidated.
export default defineConfig({
  plugins: [preact()],
  build: {
    outDir: 'dist',
    emptyOutDir: false, // dist/.gitkeep is committed so that `go build` works before a front-end build
    assetsDir: 'assets',
    sourcemap: false,
    // No inline script or style: the console's CSP allows only 'self'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: {
    // `npm run dev` proxies the APIs to a running revtrack (make run serves it on 8080).
    proxy: { '/api': process.env.REVTRACK_URL || 'http://127.0.0.1:8080' },
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.{ts,tsx}'],
    setupFiles: ['src/test/setup.ts'],
  },
});
