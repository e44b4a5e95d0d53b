-- The Lobsters news aggregator's tables, as the *baseline* application has them: with the
-- columns Lobsters maintains by hand on every write (marked "-- maintained"), which the
-- baseline queries read instead of aggregating. schema_natural.sql is this file without
-- them (tests/test_lobsters.py checks that the two agree everywhere else).
--
-- MySQL-flavoured DDL that rivulet, SQLite and MariaDB all accept. Times are INT seconds
-- since an epoch rather than DATETIME: the hotness formula needs arithmetic on them, and
-- MySQL (UNIX_TIMESTAMP) and SQLite (strftime) spell that differently.

CREATE TABLE users (
    id INT PRIMARY KEY,
    username VARCHAR(50) NOT NULL,
    email VARCHAR(100) NOT NULL,
    password_digest VARCHAR(75) NOT NULL,
    session_token VARCHAR(75) NOT NULL,
    about TEXT,
    created_at INT NOT NULL,
    is_admin INT NOT NULL DEFAULT 0,
    is_moderator INT NOT NULL DEFAULT 0,
    invited_by_user_id INT,
    karma INT NOT NULL DEFAULT 0  -- maintained
);

CREATE TABLE tags (
    id INT PRIMARY KEY,
    tag VARCHAR(25) NOT NULL,
    description VARCHAR(100),
    privileged INT NOT NULL DEFAULT 0,
    is_media INT NOT NULL DEFAULT 0,
    inactive INT NOT NULL DEFAULT 0,
    hotness_mod INT NOT NULL DEFAULT 0
);

CREATE TABLE stories (
    id INT PRIMARY KEY,
    short_id VARCHAR(6) NOT NULL,
    user_id INT NOT NULL,
    title VARCHAR(150) NOT NULL,
    url VARCHAR(250),
    description TEXT,
    created_at INT NOT NULL,
    is_expired INT NOT NULL DEFAULT 0,
    merged_story_id INT,
    upvotes INT NOT NULL DEFAULT 0,  -- maintained
    downvotes INT NOT NULL DEFAULT 0,  -- maintained
    comments_count INT NOT NULL DEFAULT 0,  -- maintained
    hotness INT NOT NULL DEFAULT 0  -- maintained
);

CREATE TABLE taggings (
    id INT PRIMARY KEY,
    story_id INT NOT NULL,
    tag_id INT NOT NULL
);

CREATE TABLE comments (
    id INT PRIMARY KEY,
    short_id VARCHAR(10) NOT NULL,
    story_id INT NOT NULL,
    user_id INT NOT NULL,
    parent_comment_id INT,
    comment TEXT NOT NULL,
    created_at INT NOT NULL,
    is_deleted INT NOT NULL DEFAULT 0,
    is_moderated INT NOT NULL DEFAULT 0,
    upvotes INT NOT NULL DEFAULT 0,  -- maintained
    downvotes INT NOT NULL DEFAULT 0,  -- maintained
    score INT NOT NULL DEFAULT 0  -- maintained
);

-- Story votes have comment_id NULL; comment votes name the comment and its story.
CREATE TABLE votes (
    id INT PRIMARY KEY,
    user_id INT NOT NULL,
    story_id INT NOT NULL,
    comment_id INT,
    vote INT NOT NULL,
    reason VARCHAR(1)
);

CREATE TABLE hidden_stories (
    id INT PRIMARY KEY,
    user_id INT NOT NULL,
    story_id INT NOT NULL
);

CREATE TABLE saved_stories (
    id INT PRIMARY KEY,
    user_id INT NOT NULL,
    story_id INT NOT NULL
);

-- When a user last read a story (updated on every story page view), and whether replies
-- on it count as notifications.
CREATE TABLE read_ribbons (
    user_id INT NOT NULL,
    story_id INT NOT NULL,
    is_following INT NOT NULL DEFAULT 1,
    updated_at INT NOT NULL,
    PRIMARY KEY (user_id, story_id)
);

CREATE TABLE messages (
    id INT PRIMARY KEY,
    author_user_id INT NOT NULL,
    recipient_user_id INT NOT NULL,
    subject VARCHAR(100) NOT NULL,
    body TEXT NOT NULL,
    has_been_read INT NOT NULL DEFAULT 0,
    created_at INT NOT NULL
);

CREATE TABLE invitations (
    id INT PRIMARY KEY,
    user_id INT NOT NULL,
    email VARCHAR(100) NOT NULL,
    code VARCHAR(40) NOT NULL,
    new_user_id INT,
    created_at INT NOT NULL
);

CREATE TABLE moderations (
    id INT PRIMARY KEY,
    moderator_user_id INT NOT NULL,
    story_id INT,
    comment_id INT,
    user_id INT,
    action VARCHAR(100) NOT NULL,
    reason VARCHAR(100),
    created_at INT NOT NULL
);

CREATE TABLE tag_filters (
    id INT PRIMARY KEY,
    user_id INT NOT NULL,
    tag_id INT NOT NULL
);
