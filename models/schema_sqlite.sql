-- revision: i15_recrawl
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
)
;
CREATE TABLE crawl_runs (
	id INTEGER NOT NULL, 
	topic_name VARCHAR(200) NOT NULL, 
	topic_text TEXT NOT NULL, 
	settings JSON NOT NULL, 
	started_at DATETIME NOT NULL, 
	finished_at DATETIME, 
	stats JSON NOT NULL, 
	PRIMARY KEY (id)
)
;
CREATE TABLE pages (
	id INTEGER NOT NULL, 
	run_id INTEGER NOT NULL, 
	url TEXT NOT NULL, 
	final_url TEXT, 
	host VARCHAR(255) NOT NULL, 
	status INTEGER, 
	fetched_at DATETIME NOT NULL, 
	depth INTEGER NOT NULL, 
	parent_url TEXT, 
	anchor TEXT, 
	title TEXT, 
	description TEXT, 
	keywords TEXT, 
	language VARCHAR(16), 
	charset VARCHAR(32), 
	published VARCHAR(32), 
	html_z BLOB, 
	text TEXT, 
	link_score JSON, 
	relevance FLOAT, 
	accepted BOOLEAN NOT NULL, warc_file TEXT, warc_offset BIGINT, warc_length BIGINT, relevance_parts JSON, etag VARCHAR(256), last_modified VARCHAR(64), content_type VARCHAR(128), 
	PRIMARY KEY (id), 
	CONSTRAINT uq_pages_run_url UNIQUE (run_id, url), 
	FOREIGN KEY(run_id) REFERENCES crawl_runs (id) ON DELETE CASCADE
)
;
CREATE INDEX ix_pages_run_id ON pages (run_id)
;
CREATE INDEX ix_pages_host ON pages (host)
;
CREATE TABLE documents (
	id INTEGER NOT NULL, 
	run_id INTEGER NOT NULL, 
	page_id INTEGER NOT NULL, 
	text TEXT NOT NULL, 
	meta JSON NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(run_id) REFERENCES crawl_runs (id) ON DELETE CASCADE, 
	FOREIGN KEY(page_id) REFERENCES pages (id) ON DELETE CASCADE
)
;
CREATE INDEX ix_documents_run_id ON documents (run_id)
;
CREATE UNIQUE INDEX ix_documents_page_id ON documents (page_id)
;
CREATE TABLE duplicates (
	id INTEGER NOT NULL, 
	run_id INTEGER NOT NULL, 
	page_id INTEGER NOT NULL, 
	original_url TEXT NOT NULL, 
	original_page_id INTEGER, 
	method VARCHAR(32) NOT NULL, 
	score FLOAT NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(run_id) REFERENCES crawl_runs (id) ON DELETE CASCADE, 
	FOREIGN KEY(page_id) REFERENCES pages (id) ON DELETE CASCADE, 
	FOREIGN KEY(original_page_id) REFERENCES pages (id) ON DELETE SET NULL
)
;
CREATE INDEX ix_duplicates_run_id ON duplicates (run_id)
;
CREATE UNIQUE INDEX ix_duplicates_page_id ON duplicates (page_id)
;
CREATE TABLE url_history (
	id INTEGER NOT NULL, 
	run_id INTEGER NOT NULL, 
	url TEXT NOT NULL, 
	accepted_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_url_history_run_url UNIQUE (run_id, url), 
	FOREIGN KEY(run_id) REFERENCES crawl_runs (id) ON DELETE CASCADE
)
;
CREATE INDEX ix_url_history_run_id ON url_history (run_id)
;
CREATE TABLE run_snapshots (
	id INTEGER NOT NULL, 
	run_id INTEGER NOT NULL, 
	worker VARCHAR(100) NOT NULL, 
	at DATETIME NOT NULL, 
	stats JSON NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(run_id) REFERENCES crawl_runs (id) ON DELETE CASCADE
)
;
CREATE INDEX ix_run_snapshots_run_id ON run_snapshots (run_id, id)
;
CREATE TABLE labels (
	id INTEGER NOT NULL, 
	topic_name VARCHAR(200) NOT NULL, 
	scope VARCHAR(16) NOT NULL, 
	target TEXT NOT NULL, 
	label BOOLEAN NOT NULL, 
	run_id INTEGER, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_labels_topic_scope_target UNIQUE (topic_name, scope, target), 
	FOREIGN KEY(run_id) REFERENCES crawl_runs (id) ON DELETE SET NULL
)
;
CREATE INDEX ix_pages_run_accepted ON pages (run_id, accepted)
;
CREATE INDEX ix_pages_run_host ON pages (run_id, host, accepted)
;
CREATE INDEX ix_pages_run_relevance ON pages (run_id, relevance)
;
CREATE INDEX ix_duplicates_run_method ON duplicates (run_id, method)
;
CREATE INDEX ix_pages_run_broken ON pages (run_id, host) WHERE status >= 400 OR text IS NULL OR text = ''
;
