//! Schema migrations, append-only: migration `i` moves the database from `user_version = i` to
//! `i + 1`. Never edit a released migration; add a new one at the end.

/// The migrations in order.
pub const MIGRATIONS: &[&str] = &[
    // 1: blogs, feed entries, raw responses, fetch log, rules, frontier, posts.
    r#"
    CREATE TABLE blogs (
        id            INTEGER PRIMARY KEY,
        home_url      TEXT NOT NULL,
        feed_url      TEXT NOT NULL UNIQUE,
        title         TEXT,
        feed_kind     TEXT NOT NULL,
        added_at      TEXT NOT NULL,
        crawl_started_at TEXT,
        crawled_at    TEXT,
        post_pattern  TEXT
    );
    CREATE TABLE feed_entries (
        blog_id       INTEGER NOT NULL REFERENCES blogs(id),
        url           TEXT NOT NULL,
        title         TEXT,
        authors       TEXT NOT NULL DEFAULT '[]',
        published     TEXT,
        content_html  TEXT,
        summary_html  TEXT,
        seen_at       TEXT NOT NULL,
        PRIMARY KEY (blog_id, url)
    );
    CREATE TABLE responses (
        id            INTEGER PRIMARY KEY,
        blog_id       INTEGER REFERENCES blogs(id),
        url           TEXT NOT NULL,
        final_url     TEXT NOT NULL,
        status        INTEGER NOT NULL,
        headers       TEXT NOT NULL,
        body          BLOB NOT NULL,
        body_len      INTEGER NOT NULL,
        fetched_at    TEXT NOT NULL
    );
    CREATE INDEX responses_by_url ON responses(blog_id, url);
    CREATE TABLE fetch_log (
        id            INTEGER PRIMARY KEY,
        blog_id       INTEGER REFERENCES blogs(id),
        url           TEXT NOT NULL,
        status        INTEGER,
        bytes         INTEGER,
        elapsed_ms    INTEGER NOT NULL,
        fetched_at    TEXT NOT NULL,
        error         TEXT
    );
    CREATE TABLE rules (
        id            INTEGER PRIMARY KEY,
        blog_id       INTEGER NOT NULL REFERENCES blogs(id),
        field         TEXT NOT NULL,
        xpath         TEXT NOT NULL,
        score         REAL NOT NULL,
        votes         INTEGER NOT NULL,
        samples       INTEGER NOT NULL,
        learned_at    TEXT NOT NULL,
        active        INTEGER NOT NULL DEFAULT 1
    );
    CREATE TABLE frontier (
        blog_id       INTEGER NOT NULL REFERENCES blogs(id),
        url           TEXT NOT NULL,
        depth         INTEGER NOT NULL,
        state         TEXT NOT NULL DEFAULT 'queued',
        seq           INTEGER NOT NULL,
        PRIMARY KEY (blog_id, url)
    );
    CREATE INDEX frontier_queue ON frontier(blog_id, state, depth, seq);
    CREATE TABLE posts (
        id            INTEGER PRIMARY KEY,
        blog_id       INTEGER NOT NULL REFERENCES blogs(id),
        url           TEXT NOT NULL UNIQUE,
        title         TEXT,
        authors       TEXT NOT NULL DEFAULT '[]',
        published     TEXT,
        content_html  TEXT NOT NULL,
        content_text  TEXT NOT NULL,
        response_id   INTEGER REFERENCES responses(id),
        fetched_at    TEXT NOT NULL,
        extracted_at  TEXT NOT NULL
    );
    CREATE INDEX posts_by_blog ON posts(blog_id, published);
    "#,
    // 2: prioritised frontier (paper §4.3): the kNN priority of queued URLs and the model size
    // it was computed at (-1: not yet scored), L(u) of processed pages (the kNN training data),
    // retry attempts, and the earliest time a URL may be retried (429/503).
    r#"
    ALTER TABLE frontier ADD COLUMN priority REAL NOT NULL DEFAULT 0;
    ALTER TABLE frontier ADD COLUMN scored_at INTEGER NOT NULL DEFAULT -1;
    ALTER TABLE frontier ADD COLUMN post_links INTEGER;
    ALTER TABLE frontier ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE frontier ADD COLUMN not_before TEXT;
    CREATE INDEX frontier_priority ON frontier(blog_id, state, priority DESC, depth, seq);
    -- Where NewCrawl starts (a site root above the blog, say); NULL: the home page.
    ALTER TABLE blogs ADD COLUMN start_url TEXT;
    "#,
    // 3: discovery order lookups (MAX(seq) per blog) without a scan.
    r#"
    CREATE INDEX frontier_seq ON frontier(blog_id, seq);
    "#,
    // 4: the frontier's "not yet scored" lookup without a scan (partial index).
    r#"
    CREATE INDEX frontier_unscored ON frontier(blog_id, seq) WHERE state = 'queued' AND scored_at < 0;
    "#,
    // 5: authors, dates and comments (paper §3.5): entry update times and comment feeds,
    // the raw date string and update time of posts, the fields that could not be extracted and
    // why (`gaps`, JSON [{field, reason}]), and comments keyed per post.
    r#"
    ALTER TABLE feed_entries ADD COLUMN updated TEXT;
    ALTER TABLE feed_entries ADD COLUMN comments_feed TEXT;
    ALTER TABLE feed_entries ADD COLUMN comment_count INTEGER;
    ALTER TABLE posts ADD COLUMN updated TEXT;
    ALTER TABLE posts ADD COLUMN published_raw TEXT;
    ALTER TABLE posts ADD COLUMN gaps TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE rules ADD COLUMN format TEXT;
    CREATE TABLE comments (
        id            INTEGER PRIMARY KEY,
        post_url      TEXT NOT NULL,
        key           TEXT NOT NULL,
        author        TEXT,
        published     TEXT,
        published_raw TEXT,
        content_html  TEXT NOT NULL,
        content_text  TEXT NOT NULL,
        parent_key    TEXT,
        source        TEXT NOT NULL,
        position      INTEGER NOT NULL,
        UNIQUE (post_url, key)
    );
    CREATE INDEX comments_by_post ON comments(post_url, position);
    "#,
    // 6: jobs with leases (NewCrawl now; UpdateCrawl and re-extract later), so any number of
    // `archive daemon` processes on one database share the work and a job whose worker died is
    // taken again once its lease expires. At most one open job per blog and kind.
    r#"
    CREATE TABLE jobs (
        id            INTEGER PRIMARY KEY,
        blog_id       INTEGER NOT NULL REFERENCES blogs(id),
        kind          TEXT NOT NULL,
        state         TEXT NOT NULL DEFAULT 'queued',
        owner         TEXT,
        lease_until   TEXT,
        attempts      INTEGER NOT NULL DEFAULT 0,
        created_at    TEXT NOT NULL,
        started_at    TEXT,
        finished_at   TEXT,
        error         TEXT,
        outcome       TEXT
    );
    CREATE UNIQUE INDEX jobs_one_open ON jobs(blog_id, kind) WHERE state IN ('queued', 'running');
    CREATE INDEX jobs_by_state ON jobs(state, id);
    "#,
    // 7: UpdateCrawl (paper §4.4) and scheduling. Jobs may wait (`not_before`); blogs carry their
    // update schedule and error streak; a post or comment whose archived text changes keeps the
    // previous text as a version; a post that disappeared from the blog is marked gone (never
    // deleted); hosts carry the earliest time any process may next request them, so politeness
    // holds across jobs and processes.
    r#"
    ALTER TABLE jobs ADD COLUMN not_before TEXT;
    DROP INDEX jobs_by_state;
    CREATE INDEX jobs_by_state ON jobs(state, not_before, id);
    ALTER TABLE blogs ADD COLUMN last_update_at TEXT;
    ALTER TABLE blogs ADD COLUMN next_update_at TEXT;
    ALTER TABLE blogs ADD COLUMN errors_in_a_row INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE blogs ADD COLUMN last_error TEXT;
    ALTER TABLE posts ADD COLUMN gone_at TEXT;
    ALTER TABLE posts ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
    CREATE TABLE post_versions (
        id            INTEGER PRIMARY KEY,
        post_url      TEXT NOT NULL,
        version       INTEGER NOT NULL,
        title         TEXT,
        authors       TEXT NOT NULL,
        published     TEXT,
        updated       TEXT,
        content_html  TEXT NOT NULL,
        content_text  TEXT NOT NULL,
        response_id   INTEGER REFERENCES responses(id),
        fetched_at    TEXT NOT NULL,
        replaced_at   TEXT NOT NULL,
        UNIQUE (post_url, version)
    );
    CREATE TABLE comment_versions (
        id            INTEGER PRIMARY KEY,
        post_url      TEXT NOT NULL,
        key           TEXT NOT NULL,
        author        TEXT,
        content_html  TEXT NOT NULL,
        content_text  TEXT NOT NULL,
        replaced_at   TEXT NOT NULL
    );
    CREATE INDEX comment_versions_by_comment ON comment_versions(post_url, key);
    CREATE TABLE host_slots (
        host          TEXT PRIMARY KEY,
        next_at       TEXT NOT NULL
    );
    "#,
    // 8: rendering in headless Chromium (paper §4.1): the user's choice per blog (`auto`,
    // `always`, `never`), the decision taken in `auto` (`all` pages, `posts` only for comment
    // widgets, `none`), and why. Rendered DOMs are stored as responses of their own, after the
    // raw response of the same URL.
    r#"
    ALTER TABLE blogs ADD COLUMN render TEXT NOT NULL DEFAULT 'auto';
    ALTER TABLE blogs ADD COLUMN renders TEXT;
    ALTER TABLE blogs ADD COLUMN render_reason TEXT;
    "#,
    // 9: nothing slips through. Frontier URLs remember how they were found (`sources`, a bit
    // per discovery source: feed, paged feed, sitemap, listing page, link, start), how many
    // pages link to them (`inlinks`: capture–recapture of the stopping rule), whether they are
    // posts, and their last failure. Posts carry their comment feed, the comment count the blog
    // declares, and a comment-check schedule (next check, last check, closed).
    r#"
    ALTER TABLE frontier ADD COLUMN sources INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE frontier ADD COLUMN inlinks INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE frontier ADD COLUMN is_post INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE frontier ADD COLUMN error TEXT;
    ALTER TABLE frontier ADD COLUMN last_attempt TEXT;
    CREATE INDEX frontier_posts ON frontier(blog_id, is_post, state);
    ALTER TABLE posts ADD COLUMN comments_feed TEXT;
    ALTER TABLE posts ADD COLUMN comments_declared INTEGER;
    ALTER TABLE posts ADD COLUMN comments_closed INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE posts ADD COLUMN last_comment_check TEXT;
    ALTER TABLE posts ADD COLUMN next_comment_check TEXT;
    CREATE INDEX posts_comment_checks ON posts(blog_id, next_comment_check);
    ALTER TABLE blogs ADD COLUMN sitemaps_read_at TEXT;
    "#,
    // 10: preservation. Bodies are stored once by SHA-256 (`blobs`, deflated) and shared by
    // every response that received them (`responses.sha256`; older rows keep their own body).
    // Each post's page requisites and media (images, stylesheets, fonts, favicon, audio/video,
    // attachments) with the response that holds them, or why not (`post_media`); `media_at`:
    // when the post's media were last captured (NULL: still to do).
    r#"
    CREATE TABLE blobs (
        sha256  TEXT PRIMARY KEY,
        body    BLOB NOT NULL,
        bytes   INTEGER NOT NULL
    );
    ALTER TABLE responses ADD COLUMN sha256 TEXT;
    CREATE INDEX responses_by_final_url ON responses(blog_id, final_url);
    CREATE TABLE post_media (
        post_url     TEXT NOT NULL,
        url          TEXT NOT NULL,
        kind         TEXT NOT NULL,
        response_id  INTEGER REFERENCES responses(id),
        state        TEXT NOT NULL,
        reason       TEXT,
        PRIMARY KEY (post_url, url)
    );
    ALTER TABLE posts ADD COLUMN media_at TEXT;
    "#,
    // 11: the daemon's rolling WARC files (`[archive] warc_dir`): per directory, the file being
    // written (NULL: none open), its length once its last whole record was written, its serial,
    // and the last response written to any file of the directory.
    r#"
    CREATE TABLE warc_rolls (
        dir            TEXT PRIMARY KEY,
        file           TEXT,
        bytes          INTEGER NOT NULL,
        serial         INTEGER NOT NULL,
        last_response  INTEGER NOT NULL
    );
    "#,
    // 12: feed entries' enclosures (podcast episodes, attached files), a JSON array of
    // `{url, mime}`; NULL when the entry has none. The post's media capture fetches them.
    r#"
    ALTER TABLE feed_entries ADD COLUMN enclosures TEXT;
    "#,
    // 13: the categories and tags a post's page gives it, a JSON array of names in page order.
    r#"
    ALTER TABLE posts ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
    "#,
    // 14: the reader (`archive serve`): full-text search over posts and comments (FTS5; a
    // post's row is 2 × posts.id, a comment's 2 × comments.id + 1, kept by triggers so every
    // writer keeps it without knowing), and captures looked up by URL across blogs (Memento).
    r#"
    CREATE VIRTUAL TABLE search USING fts5(
        title, body, author, post_url UNINDEXED,
        tokenize = 'unicode61 remove_diacritics 2'
    );
    INSERT INTO search (rowid, title, body, author, post_url)
        SELECT 2 * id, title, content_text, authors, url FROM posts;
    INSERT INTO search (rowid, title, body, author, post_url)
        SELECT 2 * id + 1, NULL, content_text, author, post_url FROM comments;
    CREATE TRIGGER search_post_added AFTER INSERT ON posts BEGIN
        INSERT INTO search (rowid, title, body, author, post_url)
            VALUES (2 * new.id, new.title, new.content_text, new.authors, new.url);
    END;
    CREATE TRIGGER search_post_changed AFTER UPDATE OF title, content_text, authors ON posts BEGIN
        DELETE FROM search WHERE rowid = 2 * old.id;
        INSERT INTO search (rowid, title, body, author, post_url)
            VALUES (2 * new.id, new.title, new.content_text, new.authors, new.url);
    END;
    CREATE TRIGGER search_post_removed AFTER DELETE ON posts BEGIN
        DELETE FROM search WHERE rowid = 2 * old.id;
    END;
    CREATE TRIGGER search_comment_added AFTER INSERT ON comments BEGIN
        INSERT INTO search (rowid, title, body, author, post_url)
            VALUES (2 * new.id + 1, NULL, new.content_text, new.author, new.post_url);
    END;
    CREATE TRIGGER search_comment_changed AFTER UPDATE OF content_text, author ON comments BEGIN
        DELETE FROM search WHERE rowid = 2 * old.id + 1;
        INSERT INTO search (rowid, title, body, author, post_url)
            VALUES (2 * new.id + 1, NULL, new.content_text, new.author, new.post_url);
    END;
    CREATE TRIGGER search_comment_removed AFTER DELETE ON comments BEGIN
        DELETE FROM search WHERE rowid = 2 * old.id + 1;
    END;
    CREATE INDEX responses_by_capture_url ON responses(url, fetched_at);
    "#,
    // 15: the reader's lists without reading posts' rows (their articles sit before `tags`, in
    // overflow pages): a blog's posts newest first, and its authors and tags, from one
    // covering index (benches/reader.sh: a 10,000-post blog's page from 250 ms to under 50).
    r#"
    CREATE INDEX posts_listing ON posts(blog_id, published, url, authors, tags);
    "#,
    // 16: coverage counts without reading posts' rows: deleted posts, declared comment counts
    // and the posts declaring them from one covering index (benches/reader.sh: the blogs page
    // of a 10,000-post blog from 58 ms to under 20).
    r#"
    CREATE INDEX posts_coverage ON posts(blog_id, gone_at, comments_declared, url);
    "#,
    // 17: which extractor gave each field of a post (`extracted_by`: JSON of
    // core::extract::ExtractedBy; NULL for posts archived before).
    r#"
    ALTER TABLE posts ADD COLUMN extracted_by TEXT;
    "#,
    // 18: a blog's fetch-log lines by index: the crawl counts them after every page, and
    // without it each count read the whole log of every blog (benches/scale_out.rs: a crawl
    // slowed as the archive grew).
    r#"
    CREATE INDEX fetch_log_by_blog ON fetch_log(blog_id);
    "#,
    // 19: a feed entry whose authors are the feed's own (its channel or feed `<author>`, the
    // entry naming none): a weak default, never stronger than the page's byline (issue 28).
    r#"
    ALTER TABLE feed_entries ADD COLUMN authors_inherited INTEGER NOT NULL DEFAULT 0;
    "#,
    // 20: what each response is (`ResponseKind`: raw, redirect, rendered) in a column of its
    // own, where it was read off the status and a header substring before (issue 31).
    r#"
    ALTER TABLE responses ADD COLUMN kind TEXT NOT NULL DEFAULT 'raw';
    UPDATE responses SET kind = 'redirect' WHERE status BETWEEN 300 AND 399;
    UPDATE responses SET kind = 'rendered' WHERE headers LIKE '%x-everblog-rendered%';
    "#,
    // 21: revisits (issue 30): when each post was last fetched again on its schedule and when it
    // is due next (`core::schedule::revisit_interval`; NULL: not planned yet), and where a post
    // moved to (a permanent redirect to another permalink of its blog; the post keeps its
    // identity, its first URL, and is found by both).
    r#"
    ALTER TABLE posts ADD COLUMN last_revisit TEXT;
    ALTER TABLE posts ADD COLUMN next_revisit TEXT;
    ALTER TABLE posts ADD COLUMN moved_to TEXT;
    ALTER TABLE posts ADD COLUMN moved_at TEXT;
    CREATE INDEX posts_revisits ON posts(blog_id, next_revisit);
    CREATE INDEX posts_moved_to ON posts(moved_to) WHERE moved_to IS NOT NULL;
    "#,
    // 22: the blog's language (BCP 47), from its feed or its pages' `<html lang>`: the reader
    // marks its posts with it, the exports declare it.
    r#"
    ALTER TABLE blogs ADD COLUMN language TEXT;
    "#,
    // 23: search finds a word's other forms (`owls` finds `owl`): the index is built again
    // with the Porter stemmer over the same Unicode tokenizer (the triggers of 14 keep
    // writing into it by name).
    r#"
    DROP TABLE search;
    CREATE VIRTUAL TABLE search USING fts5(
        title, body, author, post_url UNINDEXED,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    INSERT INTO search (rowid, title, body, author, post_url)
        SELECT 2 * id, title, content_text, authors, url FROM posts;
    INSERT INTO search (rowid, title, body, author, post_url)
        SELECT 2 * id + 1, NULL, content_text, author, post_url FROM comments;
    "#,
    // 24: a commenter's website (the link on the comment's author name): kept for the reader
    // and written to exports (WXR `wp:comment_author_url`).
    r#"
    ALTER TABLE comments ADD COLUMN author_url TEXT;
    "#,
    // 25: search finds posts by their categories and tags and by their blog's title too: a
    // post's `title` column in the index holds its title, its terms and its blog's title
    // (the hit shows the post's own title and a snippet of its text). A blog renamed
    // rewrites its posts' rows.
    r#"
    DROP TRIGGER search_post_added;
    DROP TRIGGER search_post_changed;
    CREATE TRIGGER search_post_added AFTER INSERT ON posts BEGIN
        INSERT INTO search (rowid, title, body, author, post_url)
            VALUES (2 * new.id,
                    COALESCE(new.title, '') || ' ' || new.tags || ' '
                        || COALESCE((SELECT title FROM blogs WHERE id = new.blog_id), ''),
                    new.content_text, new.authors, new.url);
    END;
    CREATE TRIGGER search_post_changed AFTER UPDATE OF title, content_text, authors, tags ON posts BEGIN
        DELETE FROM search WHERE rowid = 2 * old.id;
        INSERT INTO search (rowid, title, body, author, post_url)
            VALUES (2 * new.id,
                    COALESCE(new.title, '') || ' ' || new.tags || ' '
                        || COALESCE((SELECT title FROM blogs WHERE id = new.blog_id), ''),
                    new.content_text, new.authors, new.url);
    END;
    CREATE TRIGGER search_blog_renamed AFTER UPDATE OF title ON blogs
        WHEN old.title IS NOT new.title BEGIN
        UPDATE posts SET title = title WHERE blog_id = new.id;
    END;
    DELETE FROM search WHERE rowid % 2 = 0;
    INSERT INTO search (rowid, title, body, author, post_url)
        SELECT 2 * p.id,
               COALESCE(p.title, '') || ' ' || p.tags || ' ' || COALESCE(b.title, ''),
               p.content_text, p.authors, p.url
        FROM posts p JOIN blogs b ON b.id = p.blog_id;
    "#,
    // 26: one post, one identity (issue 42): the other addresses of an archived post (the
    // permalink that redirected to it, its address written otherwise), each answered by the
    // post it names.
    r#"
    CREATE TABLE post_aliases (
        url TEXT PRIMARY KEY,
        post_url TEXT NOT NULL,
        blog_id INTEGER NOT NULL REFERENCES blogs(id),
        found_at TEXT NOT NULL
    );
    CREATE INDEX post_aliases_by_post ON post_aliases(post_url);
    "#,
    // 27: pages beside the posts (issue 42): a blog's pages that are no posts (About,
    // Contact, Now, a reading list), archived as what they are and kept out of the posts'
    // lists, feeds and counts; the latest reading of each.
    r#"
    CREATE TABLE pages (
        id INTEGER PRIMARY KEY,
        blog_id INTEGER NOT NULL REFERENCES blogs(id),
        url TEXT NOT NULL UNIQUE,
        title TEXT,
        content_html TEXT NOT NULL,
        content_text TEXT NOT NULL,
        response_id INTEGER REFERENCES responses(id),
        fetched_at TEXT NOT NULL,
        why TEXT NOT NULL
    );
    CREATE INDEX pages_by_blog ON pages(blog_id, url);
    "#,
    // 28: each author's page on the blog (issue 42): the address a post page links for the
    // author, latest first seen, for the reader and the exports.
    r#"
    CREATE TABLE author_pages (
        blog_id INTEGER NOT NULL REFERENCES blogs(id),
        name TEXT NOT NULL,
        url TEXT NOT NULL,
        PRIMARY KEY (blog_id, name)
    );
    "#,
    // 29: a word in a blog's name no longer lists every post of the blog, and a tag ranks
    // below the title and the text (issue 45): a post's row holds its title in `title` again,
    // its categories and tags in a column of their own, `terms`, and no blog title; the
    // reader finds blogs by name apart.
    r#"
    DROP TRIGGER search_post_added;
    DROP TRIGGER search_post_changed;
    DROP TRIGGER search_blog_renamed;
    DROP TABLE search;
    CREATE VIRTUAL TABLE search USING fts5(
        title, body, author, post_url UNINDEXED, terms,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    INSERT INTO search (rowid, title, body, author, terms, post_url)
        SELECT 2 * id, title, content_text, authors, tags, url FROM posts;
    INSERT INTO search (rowid, title, body, author, post_url)
        SELECT 2 * id + 1, NULL, content_text, author, post_url FROM comments;
    CREATE TRIGGER search_post_added AFTER INSERT ON posts BEGIN
        INSERT INTO search (rowid, title, body, author, terms, post_url)
            VALUES (2 * new.id, new.title, new.content_text, new.authors, new.tags, new.url);
    END;
    CREATE TRIGGER search_post_changed AFTER UPDATE OF title, content_text, authors, tags ON posts BEGIN
        DELETE FROM search WHERE rowid = 2 * old.id;
        INSERT INTO search (rowid, title, body, author, terms, post_url)
            VALUES (2 * new.id, new.title, new.content_text, new.authors, new.tags, new.url);
    END;
    "#,
    // 30: alerts (issue 44): each alert that holds, raised once (the open ones are unique by
    // kind and blog, so daemons sharing the database raise and report it once) and cleared
    // when it no longer holds; `blog` is the blog's home page, '' for the archive as a whole.
    r#"
    CREATE TABLE alerts (
        id          INTEGER PRIMARY KEY,
        kind        TEXT NOT NULL,
        blog        TEXT NOT NULL,
        message     TEXT NOT NULL,
        raised_at   TEXT NOT NULL,
        cleared_at  TEXT
    );
    CREATE UNIQUE INDEX alerts_open ON alerts(kind, blog) WHERE cleared_at IS NULL;
    "#,
];
