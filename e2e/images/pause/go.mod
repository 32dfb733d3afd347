module github.com/homeostat/e2e/images/pause

go 1.24.0
