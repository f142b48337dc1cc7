import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, cpSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PLUGIN_DIR, PLUGIN_ZIP } from './global-setup.ts';

const run = promisify(execFile);
const DEBIAN_WORDPRESS = '/usr/share/wordpress';

export interface WordPressUser {
  id: number;
  login: string;
  email: string;
  password: string;
  applicationPassword: string;
}

export interface TestWordPress {
  url: string;
  /** The WordPress folder (ABSPATH). */
  root: string;
  users: Record<string, WordPressUser>;
  /** The administrator (`admin`)'s password. */
  adminPassword: string;
  /** Page slug → permalink. */
  pages: Record<string, string>;
  /** Runs PHP after loading WordPress (`$code` is the body of a PHP file, without `<?php`); returns stdout. */
  php(code: string): Promise<string>;
  /** Runs Debian's phpunit on the plugin's PHP tests against this WordPress. */
  phpunit(env: Record<string, string>): Promise<{ exitCode: number; output: string }>;
  /** The PHP debug log (warnings, notices) so far. */
  debugLog(): string;
  stop(): Promise<void>;
}

export interface WordPressOptions {
  settings: {
    api_url: string;
    brand_id: string;
    security_key: string;
    events?: Record<string, boolean>;
    wc_orders?: boolean;
    wc_order_value?: 'subtotal' | 'total';
  };
  users: { login: string; email: string }[];
  pages: { slug: string; title: string; content: string }[];
  /** Loads the WooCommerce stand-in (tests/support/woocommerce-stand-in.php) as a must-use plugin. */
  woocommerce?: boolean;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function wpConfig(dbName: string, url: string, debugLog: string): string {
  const salt = () => randomBytes(32).toString('hex');
  const keys = [
    'AUTH_KEY',
    'SECURE_AUTH_KEY',
    'LOGGED_IN_KEY',
    'NONCE_KEY',
    'AUTH_SALT',
    'SECURE_AUTH_SALT',
    'LOGGED_IN_SALT',
    'NONCE_SALT',
  ];
  return `<?php
define( 'DB_NAME', '${dbName}' );
define( 'DB_USER', 'root' );
define( 'DB_PASSWORD', '' );
define( 'DB_HOST', '127.0.0.1:3306' );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );
${keys.map((key) => `define( '${key}', '${salt()}' );`).join('\n')}
$table_prefix = 'wp_';
define( 'WP_HOME', '${url}' );
define( 'WP_SITEURL', '${url}' );
// Application passwords over http need a local environment.
define( 'WP_ENVIRONMENT_TYPE', 'local' );
define( 'WP_DEBUG', true );
define( 'WP_DEBUG_DISPLAY', false );
define( 'WP_DEBUG_LOG', '${debugLog}' );
define( 'DISABLE_WP_CRON', true );
define( 'AUTOMATIC_UPDATER_DISABLED', true );
define( 'WP_HTTP_BLOCK_EXTERNAL', true );
define( 'FS_METHOD', 'direct' );
if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', __DIR__ . '/' );
}
require_once ABSPATH . 'wp-settings.php';
`;
}

async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(url, { redirect: 'manual' });
      await response.arrayBuffer();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`WordPress did not answer at ${url}: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * Installs Debian's WordPress into a temp folder with its own MariaDB database, installs the plugin from its
 * zip (as "Upload Plugin" does), configures it against core-api, and serves it with `php -S`.
 */
export async function startWordPress(options: WordPressOptions): Promise<TestWordPress> {
  const home = mkdtempSync(join(tmpdir(), 'pts-wp-'));
  const root = join(home, 'wordpress');
  const dbName = `pts_wp_${randomBytes(6).toString('hex')}`;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const debugLogPath = join(home, 'debug.log');
  let server: ChildProcess | undefined;

  const dropDatabase = () =>
    run('php', [
      '-r',
      `$m = new mysqli('127.0.0.1', 'root', '', '', 3306); $m->query('DROP DATABASE IF EXISTS \`${dbName}\`');`,
    ]).catch(() => undefined);

  try {
    await run('cp', ['-rL', DEBIAN_WORDPRESS, root]);
    cpSync(join(PLUGIN_DIR, 'tests', 'support', 'theme'), join(root, 'wp-content', 'themes', 'pts-test-theme'), {
      recursive: true,
    });
    mkdirSync(join(root, 'wp-content', 'mu-plugins'), { recursive: true });
    cpSync(
      join(PLUGIN_DIR, 'tests', 'support', 'mu-test-environment.php'),
      join(root, 'wp-content', 'mu-plugins', 'pts-test-environment.php'),
    );
    if (options.woocommerce) {
      cpSync(
        join(PLUGIN_DIR, 'tests', 'support', 'woocommerce-stand-in.php'),
        join(root, 'wp-content', 'mu-plugins', 'woocommerce-stand-in.php'),
      );
    }
    writeFileSync(join(root, 'wp-config.php'), wpConfig(dbName, url, debugLogPath));

    const users = options.users.map((user) => ({ ...user, password: `pw-${randomBytes(9).toString('hex')}` }));
    const setup = {
      root,
      dbName,
      adminPassword: `admin-${randomBytes(9).toString('hex')}`,
      pluginZip: PLUGIN_ZIP,
      settings: {
        events: { user_register: false, comment_approved: false, post_published: false, wc_order_paid: false },
        debug_log: false,
        ...options.settings,
      },
      users,
      pages: options.pages,
    };
    const { stdout } = await run('php', [join(PLUGIN_DIR, 'tests', 'support', 'install.php')], {
      env: { ...process.env, PTS_WP_SETUP: JSON.stringify(setup) },
      maxBuffer: 16 * 1024 * 1024,
    });
    const installed = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as {
      users: Record<string, { id: number; applicationPassword: string }>;
      pages: Record<string, string>;
    };

    // php -S forks workers that outlive it: its own process group, ended as a whole.
    const serverLog = openSync(join(home, 'php-server.log'), 'a');
    server = spawn('php', ['-S', `127.0.0.1:${port}`, '-t', root], {
      detached: true,
      stdio: ['ignore', serverLog, serverLog],
      env: { ...process.env, PHP_CLI_SERVER_WORKERS: '4' },
    });
    closeSync(serverLog);
    await waitForHttp(`${url}/wp-login.php`, 15_000);

    const byLogin: Record<string, WordPressUser> = {};
    for (const user of users) {
      const created = installed.users[user.login];
      if (!created) throw new Error(`user ${user.login} was not created`);
      byLogin[user.login] = { ...user, id: created.id, applicationPassword: created.applicationPassword };
    }

    const stopServer = () => {
      if (server?.pid) {
        try {
          process.kill(-server.pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
    };

    return {
      url,
      root,
      users: byLogin,
      adminPassword: setup.adminPassword,
      pages: installed.pages,
      async php(code) {
        const file = join(home, `eval-${randomBytes(4).toString('hex')}.php`);
        writeFileSync(file, `<?php\nrequire '${root}/wp-load.php';\n${code}\n`);
        const { stdout: out } = await run('php', [file], { maxBuffer: 16 * 1024 * 1024 });
        rmSync(file);
        return out;
      },
      async phpunit(env) {
        try {
          const { stdout: out } = await run('phpunit', ['-c', join(PLUGIN_DIR, 'tests', 'phpunit', 'phpunit.xml')], {
            env: { ...process.env, ...env, PTS_WP_ROOT: root },
            maxBuffer: 16 * 1024 * 1024,
          });
          return { exitCode: 0, output: out };
        } catch (error) {
          const failed = error as { code?: number; stdout?: string; stderr?: string };
          return { exitCode: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
        }
      },
      debugLog() {
        try {
          return readFileSync(debugLogPath, 'utf8');
        } catch {
          return '';
        }
      },
      async stop() {
        stopServer();
        await dropDatabase();
        rmSync(home, { recursive: true, force: true });
      },
    };
  } catch (error) {
    if (server?.pid) {
      try {
        process.kill(-server.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await dropDatabase();
    rmSync(home, { recursive: true, force: true });
    throw error;
  }
}
