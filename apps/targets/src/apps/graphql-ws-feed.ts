import { createServer } from "node:http";
import { GraphQLFloat, GraphQLID, GraphQLInt, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString } from "graphql/index.js";
// graphql 16 has no "exports": Node loads its CommonJS build for graphql-ws, while vite (vitest)
// would pick its ESM build for a bare "graphql" here, and a schema from one is refused by the
// other ("from another module or realm"). Naming the CommonJS file keeps one copy everywhere.
import { useServer } from "graphql-ws/use/ws";
import { WebSocketServer } from "ws";
import { closeHttp, hostPort, listenHttp } from "../listen-http";
import { idMaker, sendJson, serveStats, type TestApp, type TestAppOptions } from "./app-http";

export const GRAPHQL_WS_PATH = "/graphql";

export interface GraphqlWsFeedStats {
  /** `posts` subscriptions started. */
  subscriptions: number;
  /** Of those, the ones still running. */
  activeSubscriptions: number;
  /** `post` mutations executed. */
  mutations: number;
  /** Posts handed to subscribers, summed over subscribers (one post to 3 subscribers counts 3). */
  pushes: number;
}

export interface FeedPost {
  id: string;
  text: string;
  ts: number;
  clientMsgId: string | null;
}

/** The SDL the schema below implements, for readers and for flows' authors. */
export const GRAPHQL_WS_FEED_SDL = `
type Post { id: ID! text: String! ts: Float! clientMsgId: String }
type Query { postCount: Int! }
type Mutation { post(text: String!, clientMsgId: String): Post! }
type Subscription { posts: Post! }`;

/**
 * A GraphQL over WebSocket feed (the `graphql-ws` library, subprotocol `graphql-transport-ws`) at
 * `/graphql`: `mutation { post(text, clientMsgId) { … } }` makes a post with a server-made id and
 * the server's epoch ms (`ts`), and every post is pushed to every `subscription { posts { … } }`
 * running at that moment, the poster's own included when it subscribes too.
 */
export async function startGraphqlWsFeed(options: TestAppOptions = {}): Promise<TestApp<GraphqlWsFeedStats>> {
  const { port = 0, host = "127.0.0.1" } = options;
  const counters: GraphqlWsFeedStats = { subscriptions: 0, activeSubscriptions: 0, mutations: 0, pushes: 0 };
  const stats = () => ({ ...counters });
  const subscribers = new Set<(p: FeedPost) => void>();
  const postIds = idMaker("p");
  let postCount = 0;

  /** One subscriber's queue of posts; pushes are counted as graphql-ws takes them to send. */
  const feed = (): AsyncIterableIterator<FeedPost> => {
    const queue: FeedPost[] = [];
    let wake: ((r: IteratorResult<FeedPost>) => void) | undefined;
    let done = false;
    const push = (p: FeedPost) => {
      if (!wake) return void queue.push(p);
      const w = wake;
      wake = undefined;
      counters.pushes++;
      w({ value: p, done: false });
    };
    const finish = (): Promise<IteratorResult<FeedPost>> => {
      if (!done) {
        done = true;
        subscribers.delete(push);
        counters.activeSubscriptions--;
        wake?.({ value: undefined, done: true });
        wake = undefined;
      }
      return Promise.resolve({ value: undefined, done: true });
    };
    subscribers.add(push);
    counters.subscriptions++;
    counters.activeSubscriptions++;
    return {
      next() {
        const p = queue.shift();
        if (p) {
          counters.pushes++;
          return Promise.resolve({ value: p, done: false });
        }
        if (done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (wake = resolve));
      },
      return: finish,
      throw: (err: unknown) => finish().then(() => Promise.reject(err as Error)),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  };

  const Post = new GraphQLObjectType({
    name: "Post",
    fields: {
      id: { type: new GraphQLNonNull(GraphQLID) },
      text: { type: new GraphQLNonNull(GraphQLString) },
      ts: { type: new GraphQLNonNull(GraphQLFloat), description: "Server epoch milliseconds (a Float: it overflows Int)." },
      clientMsgId: { type: GraphQLString },
    },
  });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: "Query", fields: { postCount: { type: new GraphQLNonNull(GraphQLInt), resolve: () => postCount } } }),
    mutation: new GraphQLObjectType({
      name: "Mutation",
      fields: {
        post: {
          type: new GraphQLNonNull(Post),
          args: { text: { type: new GraphQLNonNull(GraphQLString) }, clientMsgId: { type: GraphQLString } },
          resolve: (_root, args: { text: string; clientMsgId?: string | null }): FeedPost => {
            counters.mutations++;
            postCount++;
            const post = { id: postIds(), text: args.text, ts: Date.now(), clientMsgId: args.clientMsgId ?? null };
            for (const push of subscribers) push(post);
            return post;
          },
        },
      },
    }),
    subscription: new GraphQLObjectType({
      name: "Subscription",
      fields: { posts: { type: new GraphQLNonNull(Post), subscribe: () => feed(), resolve: (post: FeedPost) => post } },
    }),
  });

  const http = createServer((req, res) => {
    if (!serveStats(req, res, stats))
      sendJson(res, 404, { error: `no route ${req.method} ${req.url}: connect graphql-ws to ${GRAPHQL_WS_PATH}, or GET /stats` });
  });
  const wss = new WebSocketServer({ server: http, path: GRAPHQL_WS_PATH, perMessageDeflate: false });
  const graphqlWs = useServer({ schema }, wss);

  const actualPort = await listenHttp(http, port, host);
  return {
    port: actualPort,
    url: `ws://${hostPort(host, actualPort)}${GRAPHQL_WS_PATH}`,
    httpUrl: `http://${hostPort(host, actualPort)}`,
    stats,
    async close() {
      await graphqlWs.dispose();
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await closeHttp(http);
    },
  };
}
