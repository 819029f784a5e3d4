import type { FunctionComponent } from 'preact';

/** What a page gets: the path segments after its own (`/dialectic/<sessionId>` -> [sessionId]) and the query string. */
export interface PageProps {
  rest: string[];
  search: URLSearchParams;
}

/**
 * A page of the console. To add one: write `web/pages/<name>.tsx` exporting a ConsolePage, and
 * list it in `web/pages/index.ts`. Its path gets a navigation link and its own address
 * (`/<path>` and below; the gateway serves index.html for it).
 */
export interface ConsolePage {
  /** First path segment, lowercase: `debate` is served at `/debate` and `/debate/...`. */
  path: string;
  /** Navigation label. */
  label: string;
  /** Heading and document title. */
  title: string;
  component: FunctionComponent<PageProps>;
  /** A count shown beside the navigation link (e.g. items waiting), live; a hook, called on every render of the navigation. */
  useBadge?: () => number | undefined;
}
