import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { startStega } from '../e2e/stega-process.js';
import { ensureWebBuilt, launchBrowser, signIn, type TestBrowser } from './browser.js';

/**
 * The web push service worker (web/public/sw.js) in headless Chromium against `stega start`:
 * it is served at /sw.js, installs and takes control of the page under the UI's CSP. (Showing
 * its notifications cannot be tried here: this headless Chromium refuses notification
 * permission to service workers whatever the context grants; the pushes themselves and the
 * request its Acknowledge action makes are tried end to end in e2e/on-call-push.test.ts.)
 */
describe('the web push service worker in a browser', async () => {
  ensureWebBuilt();
  const db = await createTestDatabase({ template: 'stega' });
  const stega = await startStega(['start'], { DATABASE_URL: db.url, SLA_WORKERS: '1' });
  let browser: TestBrowser | undefined;
  afterAll(async () => {
    await browser?.close();
    await stega.stop();
  });

  it('installs from /sw.js with scope / and controls the page, with no errors (no CSP refusal)', async () => {
    browser = await launchBrowser();
    await signIn(browser.page, stega);
    const registered = browser.context.waitForEvent('serviceworker');
    // (run in the page: the browser's navigator, which this file's types do not know)
    const scope = await browser.page.evaluate(`(async () => {
      const registration = await navigator.serviceWorker.register('/sw.js', { scope: '/' });
      await navigator.serviceWorker.ready;
      return registration.scope;
    })()`);
    const worker = await registered;
    expect(scope).toBe(`${stega.url}/`);
    expect(worker.url()).toBe(`${stega.url}/sw.js`);
    // it claims the open pages as it activates (a page can hear from it at once)
    await browser.page.waitForFunction('navigator.serviceWorker.controller !== null');
    // (the sign-in page's probe of a session it does not have yet answers 401)
    expect(browser.problems.filter((p) => !p.includes('status of 401'))).toEqual([]);
  });
});
