/**
 * Every page of the console, in navigation order (the first is the home page). To add a page,
 * write `web/pages/<name>.tsx` exporting a ConsolePage (see ../page.ts) and list it here.
 */
import type { ConsolePage } from '../page';
import { chamberPage } from './chamber';
import { debatePage } from './debate';
import { dialecticPage } from './dialectic';
import { eventsPage } from './events';
import { fleetPage } from './fleet';
import { inboxPage } from './inbox';
import { tribunalPage } from './tribunal';
import { votingPage } from './voting';

export const pages: ConsolePage[] = [fleetPage, tribunalPage, votingPage, dialecticPage, debatePage, chamberPage, eventsPage, inboxPage];
