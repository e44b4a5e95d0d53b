-- A news aggregator, after Figure 2 of the Noria paper: stories, votes, users, comments.
-- Used by the main job (`rivulet demo`), the tests and the benchmarks.

CREATE TABLE users (
    id INT PRIMARY KEY,
    name VARCHAR(64) NOT NULL
);

CREATE TABLE stories (
    id INT PRIMARY KEY,
    author INT NOT NULL,
    title VARCHAR(255) NOT NULL,
    url VARCHAR(255),
    created_at DATETIME NOT NULL
);

CREATE TABLE votes (
    user_id INT NOT NULL,
    story_id INT NOT NULL
);

CREATE TABLE comments (
    id INT PRIMARY KEY,
    story_id INT NOT NULL,
    author INT NOT NULL,
    body TEXT NOT NULL,
    created_at DATETIME NOT NULL
);

-- Every story with its vote count (stories without votes count 0).
CREATE VIEW StoryVotes AS
    SELECT stories.id, stories.author, stories.title, stories.url, stories.created_at,
           COUNT(votes.user_id) AS vcount
    FROM stories LEFT JOIN votes ON stories.id = votes.story_id
    GROUP BY stories.id;

-- The paper's StoriesWithVC: one story and its vote count, by story id.
CREATE VIEW StoriesWithVC AS
    SELECT id, author, title, url, vcount FROM StoryVotes WHERE id = ?;

-- The front page: the 30 stories with the most votes.
CREATE VIEW FrontPage AS
    SELECT id, title, vcount FROM StoryVotes ORDER BY vcount DESC LIMIT 30;

-- A user's karma: votes received on the stories they wrote.
CREATE VIEW Karma AS
    SELECT stories.author, COUNT(*) AS karma
    FROM stories JOIN votes ON stories.id = votes.story_id
    WHERE stories.author = ?
    GROUP BY stories.author;

-- A story's comments with their authors' names, oldest first.
CREATE VIEW StoryComments AS
    SELECT comments.id, users.name, comments.body, comments.created_at
    FROM comments JOIN users ON comments.author = users.id
    WHERE comments.story_id = ?
    ORDER BY comments.created_at;

-- Stories submitted after a given time (a range parameter).
CREATE VIEW RecentStories AS
    SELECT id, title, created_at FROM stories WHERE created_at > ? ORDER BY created_at DESC;
